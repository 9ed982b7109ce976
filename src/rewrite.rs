//! The output of one request. The engine first builds an [`OutPlan`] over the canonical
//! messages: kept index ranges and edited messages with the [`Edit`]s made to them. The caller
//! receives a [`Rewrite`] over its own items: for the canonical wire formats the same ranges and
//! each edited message as JSON; for host formats the edits applied to the host's items
//! ([`crate::format::host`]). Unchanged items are referred to by index, so the caller keeps its own
//! objects and every field the engine does not know stays exactly as it was.

use std::fmt::Write;
use std::sync::Arc;

/// One surgical edit of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// The tool result answering `call_id` is replaced by `text`: its head/tail compression, or
    /// the reference to a later result that supersedes it.
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

    /// The rewrite of the caller's messages that carries out this plan (one replacement per
    /// edited message).
    pub fn rewrite(&self) -> Rewrite {
        let mut out = Rewrite::default();
        for item in &self.items {
            match item {
                OutItem::Range(a, b) => (*a..*b).for_each(|i| out.keep(i)),
                OutItem::Message(e) => out.pieces.push(Piece::Replace {
                    from: vec![e.index],
                    items: vec![e.message.clone()],
                }),
            }
        }
        out
    }
}

/// One piece of a rewritten request.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// The caller's items `start..end`, unchanged (the caller keeps its own objects).
    Keep(usize, usize),
    /// Items edited by the engine, as JSON texts, each with the index of the caller's item it
    /// replaces (an edit may remove items, e.g. signed reasoning, so `from` can have gaps).
    Replace {
        /// For each new item, the index of the caller's item it comes from.
        from: Vec<usize>,
        /// The new items as JSON texts.
        items: Vec<Arc<str>>,
    },
}

/// The rewritten request as the caller applies it: kept ranges of its own items and
/// replacement items, in order. The only thing a host has to do is splice it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rewrite {
    /// The pieces, in order.
    pub pieces: Vec<Piece>,
}

impl Rewrite {
    /// Appends the caller's item `index` unchanged.
    pub fn keep(&mut self, index: usize) {
        if let Some(Piece::Keep(_, end)) = self.pieces.last_mut() {
            if *end == index {
                *end += 1;
                return;
            }
        }
        self.pieces.push(Piece::Keep(index, index + 1));
    }

    /// Number of items in the rewritten request.
    pub fn len(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Keep(s, e) => e - s,
                Piece::Replace { items, .. } => items.len(),
            })
            .sum()
    }

    /// The rewrite has no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rewrite as JSON: an array of `[start, end]` ranges and replacements
    /// `{"from": [indices], "items": [items]}`.
    pub fn to_json(&self) -> String {
        let mut s = String::from("[");
        for (k, piece) in self.pieces.iter().enumerate() {
            if k > 0 {
                s.push(',');
            }
            match piece {
                Piece::Keep(a, b) => {
                    let _ = write!(s, "[{a},{b}]");
                }
                Piece::Replace { from, items } => {
                    let from: Vec<String> = from.iter().map(usize::to_string).collect();
                    let _ = write!(
                        s,
                        "{{\"from\":[{}],\"items\":[{}]}}",
                        from.join(","),
                        items.join(",")
                    );
                }
            }
        }
        s.push(']');
        s
    }

    /// The rewritten request as a JSON array, given the caller's items as JSON texts.
    pub fn render(&self, originals: &[&str]) -> String {
        let mut parts: Vec<&str> = Vec::with_capacity(self.len());
        for piece in &self.pieces {
            match piece {
                Piece::Keep(a, b) => parts.extend_from_slice(&originals[*a..*b]),
                Piece::Replace { items, .. } => parts.extend(items.iter().map(|i| &**i)),
            }
        }
        format!("[{}]", parts.join(","))
    }
}
