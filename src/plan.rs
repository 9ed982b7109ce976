//! The output of one request: an edit plan over the caller's messages. Unchanged messages are
//! referred to by index ranges, so the caller keeps its own objects (every unknown field stays
//! exactly as it was); only edited messages travel back as JSON.

use std::fmt::Write;
use std::sync::Arc;

/// One piece of the rewritten request.
#[derive(Debug, Clone, PartialEq)]
pub enum OutItem {
    /// The caller's messages `start..end`, unchanged.
    Range(usize, usize),
    /// A replacement message, as JSON text.
    Message(Arc<str>),
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

    /// Appends a replacement message.
    pub fn replace(&mut self, json: Arc<str>) {
        self.items.push(OutItem::Message(json));
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

    /// The plan as JSON: an array of `[start, end]` ranges and replacement message objects.
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
                OutItem::Message(json) => s.push_str(json),
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
                OutItem::Message(json) => push(&mut s, json),
            }
        }
        s.push(']');
        s
    }
}
