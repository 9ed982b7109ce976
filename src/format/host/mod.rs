//! Host message lists: OpenCode's `{info, parts}` messages, Pi's agent messages and OpenAI
//! Responses `input` items. A host item maps onto one or more canonical messages in one of the
//! canonical wire formats (an OpenCode assistant message holds its tool calls *and* their
//! results, so it becomes two), or several consecutive items onto one (the reasoning, message and
//! call items of one Responses turn). The engine decides on the canonical messages; the edits it
//! makes are then applied here to the host's own items, so every edit has one meaning per format
//! and the caller only splices the result in.

mod opencode;
mod pi;
mod responses;

use std::ops::Range;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::Format;
use crate::error::Result;
use crate::rewrite::{Edit, OutItem, OutPlan, Piece, Rewrite};

pub use opencode::OpenCode;
pub use pi::Pi;
pub use responses::Responses;

/// One canonical message read out of a host's items.
#[derive(Debug, Clone, PartialEq)]
pub struct Canonical {
    /// The message in the host format's canonical wire format.
    pub message: Value,
    /// The host items it comes from (consecutive).
    pub items: Range<usize>,
}

/// A host's message list, read as canonical messages and edited in place.
pub trait HostFormat: Sync {
    /// The wire format the canonical messages are written in.
    fn canonical(&self) -> Format;
    /// The canonical messages of the host's items, in order; every item belongs to at least one.
    fn read(&self, items: &[Value]) -> Result<Vec<Canonical>>;
    /// Applies `edit`, made by the engine on a canonical message, to that message's host items
    /// (each paired with its index in the request). An edit that does not apply changes nothing.
    fn apply(&self, items: &mut Vec<(usize, Value)>, edit: &Edit);
    /// Whether each item is read on its own: `read` of a list gives the `read` of each of its
    /// items in turn, so an item's canonical messages can be kept from one request to the next.
    fn by_item(&self) -> bool {
        false
    }
}

/// The rewrite of the host's items that carries out `plan`, a plan over the canonical messages
/// `canon` read from `items`. Items whose canonical messages all left the request leave with
/// them; an item stays whole when any of its canonical messages stays; edits are applied to
/// copies of the items, in the order the engine made them.
pub fn host_rewrite(
    host: &dyn HostFormat,
    plan: &OutPlan,
    canon: &[Canonical],
    items: &[Value],
) -> Rewrite {
    let ranges: Vec<Range<usize>> = canon.iter().map(|c| c.items.clone()).collect();
    let mut out = Rewrite::default();
    for (range, edits) in groups(plan, &ranges) {
        if edits.is_empty() {
            range.for_each(|i| out.keep(i));
        } else {
            out.pieces
                .push(edited(host, range.map(|i| (i, items[i].clone())), &edits));
        }
    }
    out
}

/// The host items `plan` sends, in order: runs of the items of consecutive canonical messages
/// (`ranges[c]`: the items of canonical message `c`), each with the edits made on those
/// canonical messages (none: the items go unchanged).
pub fn groups<'a>(
    plan: &'a OutPlan,
    ranges: &[Range<usize>],
) -> Vec<(Range<usize>, Vec<&'a Edit>)> {
    let mut groups: Vec<(Range<usize>, Vec<&Edit>)> = Vec::new();
    let mut visit = |c: usize, edits: &'a [Edit]| {
        let range = ranges[c].clone();
        match groups.last_mut() {
            Some((r, e)) if *r == range => e.extend(edits),
            _ => groups.push((range, edits.iter().collect())),
        }
    };
    for item in &plan.items {
        match item {
            OutItem::Range(a, b) => (*a..*b).for_each(|c| visit(c, &[])),
            OutItem::Message(e) => visit(e.index, &e.edits),
        }
    }
    groups
}

/// The piece replacing `items` (each with its index in the request) by their copies with
/// `edits` applied in order.
pub fn edited(
    host: &dyn HostFormat,
    items: impl Iterator<Item = (usize, Value)>,
    edits: &[&Edit],
) -> Piece {
    let mut edited: Vec<(usize, Value)> = items.collect();
    for e in edits {
        host.apply(&mut edited, e);
    }
    Piece::Replace {
        from: edited.iter().map(|(i, _)| *i).collect(),
        items: edited
            .iter()
            .map(|(_, v)| Arc::<str>::from(v.to_string()))
            .collect(),
    }
}

/// A JSON object built from `(key, value)` pairs in order, skipping `None` values.
fn object<const N: usize>(pairs: [(&str, Option<Value>); N]) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    }
    Value::Object(m)
}

/// `{"type": "text", "text": text}`.
fn text_block(text: impl Into<Value>) -> Value {
    object([("type", Some("text".into())), ("text", Some(text.into()))])
}

/// The `type` of a JSON object, if it has a string one.
fn kind(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// A value as text the way a host would print it: strings as they are, null or missing as
/// empty, anything else as JSON.
fn as_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A JSON value is "truthy" the way the hosts test flags: not null, false, 0 or "".
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}
