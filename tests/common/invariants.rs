//! The trim invariants, checked from the outside on replayed requests.

use std::collections::HashSet;

use serde_json::Value;
use smarter_compact::format::Format;
use smarter_compact::message::{Message, Role};
use smarter_compact::tokens::estimate_message;
use smarter_compact::trim::{POINTER_PREFIX, SUPERSEDED_PREFIX};

use super::Step;

/// A new trim adds a pointer: what it frees is the dropped tokens minus about this much.
const POINTER_ALLOWANCE: u64 = 100;

/// Counts over a replay, and what went wrong.
#[derive(Default, Debug)]
pub struct Tally {
    pub requests: usize,
    pub trims: usize,
    pub reusable: usize,
    pub reused: usize,
    pub over_minimum: usize,
    pub over_guard: usize,
    pub violations: Vec<String>,
}

impl Tally {
    fn bad(&mut self, what: String) {
        if self.violations.len() < 20 {
            self.violations.push(what);
        } else {
            self.violations.push(String::new());
        }
    }
}

fn view(format: Format, m: &Value) -> Message {
    format.adapter().view(m, 0).expect("valid message")
}

/// The pointer text a message starts with, if any.
fn pointer_of(format: Format, m: &Value) -> Option<String> {
    let first_text = match &m["content"] {
        Value::String(s) => s.split("\n\n").next().map(str::to_string),
        Value::Array(a) => a
            .first()
            .and_then(|b| b["text"].as_str())
            .map(str::to_string),
        _ => None,
    }?;
    let _ = format;
    first_text.starts_with(POINTER_PREFIX).then_some(first_text)
}

/// `m` is `orig` with large parts compressed or results superseded (same calls and results,
/// a header or a reference).
fn compressed_of(format: Format, orig: &Value, m: &Value) -> bool {
    let (a, b) = (view(format, orig), view(format, m));
    let text = b.plain_text();
    a.role == b.role
        && a.result_ids().eq(b.result_ids())
        && a.call_ids().eq(b.call_ids())
        && (text.contains("[smarter-compact] output compressed:")
            || text.contains(SUPERSEDED_PREFIX))
}

/// The output holds `orig` unchanged, or with the pointer in front, or with thinking stripped.
fn kept(format: Format, orig: &Value, out: &[Value]) -> bool {
    let a = format.adapter();
    out.iter().any(|m| {
        if m == orig || compressed_of(format, orig, m) {
            return true;
        }
        let mut stripped = orig.clone();
        if a.strip_signed_thinking(&mut stripped) && *m == stripped {
            return true;
        }
        pointer_of(format, m).is_some_and(|p| {
            let mut with = orig.clone();
            a.prepend_text(&mut with, &p);
            *m == with
        })
    })
}

/// Checks every step of one replay.
pub fn check(
    id: &str,
    steps: &[Step],
    format: Format,
    trim_at: u32,
    keep_last: usize,
    t: &mut Tally,
) {
    let mut prev: Option<&Vec<String>> = None;
    for (k, s) in steps.iter().enumerate() {
        t.requests += 1;
        let out: Vec<Value> = s
            .output
            .iter()
            .map(|j| serde_json::from_str(j).expect("json"))
            .collect();
        let vin: Vec<Message> = s.input.iter().map(|m| view(format, m)).collect();
        let vout: Vec<Message> = out.iter().map(|m| view(format, m)).collect();
        let here = format!("{id} req {k}");
        // Pairing.
        let mut calls = HashSet::new();
        let mut answered = HashSet::new();
        for m in &vout {
            for r in m.result_ids() {
                if !calls.contains(r) {
                    t.bad(format!("{here}: orphan result {r}"));
                }
                answered.insert(r.to_string());
            }
            calls.extend(m.call_ids().map(str::to_string));
        }
        let input_answered: HashSet<&str> = vin.iter().flat_map(|m| m.result_ids()).collect();
        for c in &calls {
            if input_answered.contains(c.as_str()) && !answered.contains(c) {
                t.bad(format!("{here}: orphan call {c}"));
            }
        }
        // What must stay.
        for (i, m) in vin.iter().enumerate() {
            if m.role == Role::System && !out.contains(&s.input[i]) {
                t.bad(format!("{here}: system message {i} lost or altered"));
            }
        }
        let task = vin.iter().position(Message::is_real_user_turn);
        let last = vin.iter().rposition(Message::is_real_user_turn);
        let reply = last.and_then(|l| vin[..l].iter().rposition(|m| m.role == Role::Assistant));
        for (what, i) in [
            ("task turn", task),
            ("last user turn", last),
            ("reply before it", reply),
        ] {
            if let Some(i) = i {
                if !kept(format, &s.input[i], &out) {
                    t.bad(format!("{here}: {what} ({i}) missing or altered"));
                }
            }
        }
        let exchanges: Vec<&Message> = vin
            .iter()
            .filter(|m| m.call_ids().next().is_some())
            .collect();
        for m in &exchanges[exchanges.len().saturating_sub(keep_last)..] {
            for c in m.call_ids() {
                if input_answered.contains(c) && !answered.contains(c) {
                    t.bad(format!("{here}: recent exchange {c} dropped"));
                }
            }
        }
        // Signed thinking: after a trim only the latest assistant message keeps it.
        if s.stats.trimmed {
            t.trims += 1;
            let last_asst = vout.iter().rposition(|m| m.role == Role::Assistant);
            for (i, m) in vout.iter().enumerate() {
                if m.has_signed_thinking() && Some(i) != last_asst {
                    t.bad(format!(
                        "{here}: signed thinking kept on output message {i}"
                    ));
                }
            }
        }
        // Size: the stats never under-report what is sent.
        let sent: u64 = vout.iter().map(|m| u64::from(estimate_message(m))).sum();
        if sent > s.stats.after_tokens + 8 {
            t.bad(format!(
                "{here}: after_tokens {} but output estimates {sent}",
                s.stats.after_tokens
            ));
        }
        if s.stats.after_tokens > u64::from(trim_at) {
            if !s.stats.over_limit {
                t.bad(format!("{here}: over trim_at without over_limit"));
            }
            // Over the limit only by what must stay, plus at most what the loop guard spares.
            let must = must_keep(&vin, task, last, reply, keep_last);
            let mut j = 0;
            let mut spare = 0u64;
            for (o, m) in out.iter().enumerate() {
                while j < s.input.len() && !kept(format, &s.input[j], std::slice::from_ref(m)) {
                    j += 1;
                }
                if j == s.input.len() {
                    t.bad(format!("{here}: output message {o} is not from the input"));
                    break;
                }
                if !must[j] {
                    spare += u64::from(estimate_message(&vout[o]));
                }
                j += 1;
            }
            if spare == 0 {
                t.over_minimum += 1;
            } else if spare < u64::from(trim_at) / 10 + POINTER_ALLOWANCE {
                t.over_guard += 1;
            } else {
                t.bad(format!(
                    "{here}: over trim_at with {spare} droppable tokens kept"
                ));
            }
        }
        // Sticky: between trims the previous output is a prefix of this one.
        if let (Some(p), false) = (prev, s.stats.trimmed) {
            t.reusable += 1;
            let same = p.len() <= s.output.len() && p.iter().zip(&s.output).all(|(a, b)| a == b);
            if same {
                t.reused += 1;
            } else {
                t.bad(format!("{here}: prefix changed without a trim"));
            }
            if same != s.stats.prefix_reused {
                t.bad(format!(
                    "{here}: stats.prefix_reused={} but reuse={same}",
                    s.stats.prefix_reused
                ));
            }
        }
        prev = Some(&s.output);
    }
}

/// Messages the rules never remove: system, task turn, last user turn, the reply before it (with
/// its results), the last tool exchanges, and everything in flight after the first of those.
fn must_keep(
    vin: &[Message],
    task: Option<usize>,
    last: Option<usize>,
    reply: Option<usize>,
    keep_last: usize,
) -> Vec<bool> {
    let mut must: Vec<bool> = vin.iter().map(|m| m.role == Role::System).collect();
    let unit = |i: usize, must: &mut Vec<bool>| {
        must[i] = true;
        let ids: HashSet<&str> = vin[i].call_ids().collect();
        for (j, m) in vin.iter().enumerate() {
            if m.result_ids().any(|r| ids.contains(r)) {
                must[j] = true;
            }
        }
    };
    for i in [task, last, reply].into_iter().flatten() {
        unit(i, &mut must);
    }
    let exchanges: Vec<usize> = (0..vin.len())
        .filter(|&i| vin[i].call_ids().next().is_some())
        .collect();
    let recent = &exchanges[exchanges.len().saturating_sub(keep_last)..];
    for &i in recent {
        unit(i, &mut must);
    }
    if let Some(&first) = recent.first() {
        let from = first.max(last.map_or(0, |l| l + 1));
        for m in must.iter_mut().skip(from) {
            *m = true;
        }
    }
    must
}
