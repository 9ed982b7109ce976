//! The output of one request: an edit plan over the caller's messages. Unchanged messages are
//! referred to by index ranges, so the caller keeps its own objects (every unknown field stays
//! exactly as it was); an edited message travels back as JSON together with the list of edits
//! made to it, so a host adapter can apply the same edits to its own message objects.

use std::fmt::Write;
use std::sync::Arc;

use serde::Serialize;

/// One surgical edit of a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Edit {
    /// The tool result answering `call_id` is replaced by `text` (head/tail compression).
    Compress {
        /// The call the result answers.
        call_id: String,
        /// What is sent instead of the full output.
        text: String,
    },
    /// The `nth` text block of an assistant message is replaced by `text` (a runaway answer).
    CompressText {
        /// Which text block, counting text blocks only.
        nth: usize,
        /// What is sent instead.
        text: String,
    },
    /// `text` (the pointer) goes in front of the message's content.
    Prepend(String),
    /// Signed and redacted thinking is removed.
    StripThinking {},
}

/// An edited message: its position in the request, its new JSON, and the edits.
#[derive(Debug, Clone, PartialEq)]
pub struct Edited {
    /// Index of the message in the caller's request.
    pub index: usize,
    /// The message after the edits, as JSON text.
    pub message: Arc<str>,
    /// The edits, in the order they were made.
    pub edits: Vec<Edit>,
}

/// One piece of the rewritten request.
#[derive(Debug, Clone, PartialEq)]
pub enum OutItem {
    /// The caller's messages `start..end`, unchanged.
    Range(usize, usize),
    /// An edited message.
    Message(Arc<Edited>),
}

/// The rewritten request as a sequence of kept ranges and replacement messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutPlan {
    /// The pieces, in order.
    pub items: Vec<OutItem>,
}

impl OutPlan {
    /// Appends the caller's message `index` unchanged.
    pub fn keep(&mut self, index: usize) {
        if let Some(OutItem::Range(_, end)) = self.items.last_mut() {
            if *end == index {
                *end += 1;
                return;
            }
        }
        self.items.push(OutItem::Range(index, index + 1));
    }

    /// Appends an edited message.
    pub fn replace(&mut self, edited: Arc<Edited>) {
        self.items.push(OutItem::Message(edited));
    }

    /// Number of messages in the rewritten request.
    pub fn len(&self) -> usize {
        self.items
            .iter()
            .map(|i| match i {
                OutItem::Range(s, e) => e - s,
                OutItem::Message(_) => 1,
            })
            .sum()
    }

    /// The plan has no messages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The plan as JSON: an array of `[start, end]` ranges and edited messages
    /// `{"i": index, "m": message, "e": [edits]}`.
    pub fn to_json(&self) -> String {
        let mut s = String::from("[");
        for (k, item) in self.items.iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            match item {
                OutItem::Range(a, b) => {
                    let _ = write!(s, "[{a},{b}]");
                }
                OutItem::Message(e) => {
                    let edits = serde_json::to_string(&e.edits).unwrap_or_else(|_| "[]".into());
                    let _ = write!(s, "{{\"i\":{},\"m\":{},\"e\":{edits}}}", e.index, e.message);
                }
            }
        }
        s.push(']');
        s
    }

    /// The rewritten request as a JSON array, given the caller's messages as JSON texts.
    pub fn render(&self, originals: &[&str]) -> String {
        let mut s = String::from("[");
        let mut first = true;
        let mut push = |s: &mut String, m: &str| {
            if !first {
                s.push(',');
            }
            first = false;
            s.push_str(m);
        };
        for item in &self.items {
            match item {
                OutItem::Range(a, b) => originals[*a..*b].iter().for_each(|m| push(&mut s, m)),
                OutItem::Message(e) => push(&mut s, &e.message),
            }
        }
        s.push(']');
        s
    }
}
