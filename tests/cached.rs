//! Requests by message id (`Engine::transform_cached`): unchanged messages (or OpenCode and Pi
//! items) go without their text, and the outcome is the one the full request gives, request
//! for request.

mod common;

use common::{engine, hosts, load_sessions, opts, requests};
use serde_json::{json, Value};
use smarter_compact::engine::Engine;
use smarter_compact::format::Format;
use smarter_compact::store::MemStore;

/// A caller that numbers messages the way the JavaScript package does: a message equal to the
/// one at its place in the previous request keeps its id and goes without its text.
struct Caller {
    format: Format,
    last: Vec<(u32, String)>,
    next: u32,
    /// Requests the engine asked to see again with every text.
    retries: usize,
}

impl Caller {
    fn new(format: Format) -> Caller {
        Caller {
            format,
            last: Vec::new(),
            next: 0,
            retries: 0,
        }
    }

    fn send(&mut self, e: &mut Engine<MemStore>, req: &[Value]) -> String {
        let texts: Vec<String> = req.iter().map(Value::to_string).collect();
        let ids: Vec<u32> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| match self.last.get(i) {
                Some((id, old)) if old == t => *id,
                _ => {
                    self.next += 1;
                    self.next
                }
            })
            .collect();
        let known = |i: usize| self.last.get(i).is_some_and(|(id, _)| *id == ids[i]);
        let partial: Vec<Option<&str>> = (0..texts.len())
            .map(|i| (!known(i)).then_some(texts[i].as_str()))
            .collect();
        let o = opts(self.format);
        let out = match e.transform_cached(&ids, &partial, &o).expect("cached") {
            Some(out) => out,
            None => {
                self.retries += 1;
                let all: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
                e.transform_cached(&ids, &all, &o)
                    .expect("cached")
                    .expect("every text was given")
            }
        };
        self.last = ids.into_iter().zip(texts).collect();
        out.to_json()
    }
}

fn full(e: &mut Engine<MemStore>, req: &[Value]) -> String {
    full_in(Format::OpenAi, e, req)
}

fn full_in(format: Format, e: &mut Engine<MemStore>, req: &[Value]) -> String {
    let body = serde_json::to_string(req).expect("json");
    e.transform(&body, &opts(format))
        .expect("transform")
        .to_json()
}

fn session(id: &str) -> Vec<Vec<Value>> {
    let h = load_sessions()
        .into_iter()
        .find(|(s, _)| s == id)
        .expect("session")
        .1;
    requests(&h)
}

#[test]
fn cached_requests_give_the_full_requests_outcome_and_send_only_what_is_new() {
    let reqs = session("django__django-11087");
    let (mut a, mut b) = (engine(8_000), engine(8_000));
    let mut caller = Caller::new(Format::OpenAi);
    let mut trims = 0;
    for (k, req) in reqs.iter().enumerate() {
        let want = full(&mut a, req);
        assert_eq!(caller.send(&mut b, req), want, "request {k}");
        trims += usize::from(want.contains("\"trimmed\":true"));
    }
    assert!(trims >= 2, "the session must trim, got {trims}");
    // A new cut reads the messages not sent back from the store: only the new messages ever go.
    assert_eq!(
        caller.retries, 0,
        "{} retries for {trims} trims",
        caller.retries
    );
}

#[test]
fn an_old_message_edited_in_place_is_read_again() {
    let reqs = session("django__django-11087");
    let (mut a, mut b) = (engine(8_000), engine(8_000));
    let mut caller = Caller::new(Format::OpenAi);
    let last = reqs.len() - 1;
    for req in &reqs[..last] {
        assert_eq!(caller.send(&mut b, req), full(&mut a, req));
    }
    let mut edited = reqs[last].clone();
    edited[1]["content"] = Value::from("an earlier message, changed by the host");
    assert_eq!(caller.send(&mut b, &edited), full(&mut a, &edited));
}

#[test]
fn a_message_without_its_text_under_an_unknown_id_is_asked_for_and_nothing_is_recorded() {
    let reqs = session("django__django-11087");
    let req = &reqs[3];
    let mut e = engine(8_000);
    let o = opts(Format::OpenAi);
    let ids: Vec<u32> = (1..=req.len() as u32).collect();
    let texts: Vec<String> = req.iter().map(Value::to_string).collect();
    let mut partial: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
    partial[0] = None;
    assert!(e
        .transform_cached(&ids, &partial, &o)
        .expect("ok")
        .is_none());
    assert_eq!(e.status().usage.requests, 0);
    let all: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
    assert!(e.transform_cached(&ids, &all, &o).expect("ok").is_some());
    // Now known under the same ids after the same history: no text needed.
    let none: Vec<Option<&str>> = vec![None; texts.len()];
    let again = e.transform_cached(&ids, &none, &o).expect("ok");
    assert!(again.is_some());
    assert_eq!(e.status().usage.requests, 2);
    // The same ids in another order are another history: the texts are needed again.
    let mut swapped = ids.clone();
    swapped.swap(1, 2);
    assert!(e
        .transform_cached(&swapped, &none, &o)
        .expect("ok")
        .is_none());
    // A host format whose items are read together is refused.
    assert!(e
        .transform_cached(&ids, &all, &opts(Format::Responses))
        .is_err());
}

/// An OpenAI history as Anthropic messages (the system message left out, a run of tool
/// results as one user message of `tool_result` blocks).
fn to_anthropic(h: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in h {
        match m["role"].as_str() {
            Some("user") => out.push(json!({"role": "user", "content": m["content"]})),
            Some("assistant") => {
                let mut blocks = Vec::new();
                if let Some(t) = m["content"].as_str().filter(|t| !t.is_empty()) {
                    blocks.push(json!({"type": "text", "text": t}));
                }
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let args = c["function"]["arguments"].as_str().unwrap_or("{}");
                    let input: Value = serde_json::from_str(args).unwrap_or(json!({}));
                    blocks.push(json!({"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": input}));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            Some("tool") => {
                let block = json!({"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]});
                match out.last_mut() {
                    Some(last) if last["content"][0]["type"] == "tool_result" => {
                        last["content"].as_array_mut().expect("blocks").push(block)
                    }
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
            _ => {}
        }
    }
    out
}

/// The real session's requests as OpenCode or Pi sends them.
fn host_session(format: Format, id: &str) -> Vec<Vec<Value>> {
    let h = load_sessions()
        .into_iter()
        .find(|(s, _)| s == id)
        .expect("session")
        .1;
    let items = match format {
        Format::OpenCode => hosts::to_opencode(&to_anthropic(&h)),
        _ => hosts::to_pi(&h),
    };
    hosts::requests(format, &items)
}

#[test]
fn host_items_by_id_give_the_full_requests_outcome_and_send_only_what_is_new() {
    for format in [Format::OpenCode, Format::Pi] {
        let reqs = host_session(format, "django__django-11087");
        let (mut a, mut b) = (engine(8_000), engine(8_000));
        let mut caller = Caller::new(format);
        let mut trims = 0;
        let mut sent = 0;
        for (k, req) in reqs.iter().enumerate() {
            let want = full_in(format, &mut a, req);
            let before = caller.last.len();
            assert_eq!(caller.send(&mut b, req), want, "{format:?} request {k}");
            sent += req.len() - before.min(req.len());
            trims += usize::from(want.contains("\"trimmed\":true"));
        }
        assert!(trims >= 2, "{format:?}: the session must trim, got {trims}");
        assert!(
            caller.retries >= trims && caller.retries <= trims + 1,
            "{format:?}: {} retries for {trims} trims",
            caller.retries
        );
        assert!(
            sent < reqs.iter().map(Vec::len).sum::<usize>() / 4,
            "{format:?}"
        );
    }
}

#[test]
fn a_host_item_edited_in_place_is_read_again() {
    for format in [Format::OpenCode, Format::Pi] {
        let reqs = host_session(format, "django__django-11087");
        let (mut a, mut b) = (engine(8_000), engine(8_000));
        let mut caller = Caller::new(format);
        let last = reqs.len() - 1;
        for req in &reqs[..last] {
            assert_eq!(caller.send(&mut b, req), full_in(format, &mut a, req));
        }
        let mut edited = reqs[last].clone();
        let user = |v: &Value| v["role"] == "user" || v["info"]["role"] == "user";
        let at = edited.iter().rposition(user).expect("a user item");
        match format {
            Format::OpenCode => edited[at]["parts"][0]["text"] = json!("changed by the host"),
            _ => edited[at]["content"] = json!([{"type": "text", "text": "changed"}]),
        }
        assert_eq!(
            caller.send(&mut b, &edited),
            full_in(format, &mut a, &edited)
        );
    }
}
