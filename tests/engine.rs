//! Engine behaviour beyond the invariants: manual trims, reverted histories, status counters.

mod common;

use common::{engine, load_sessions, opts, replay, requests};
use serde_json::Value;
use smarter_compact::format::Format;

fn body(msgs: &[Value]) -> String {
    serde_json::to_string(msgs).expect("json")
}

fn history() -> Vec<Value> {
    load_sessions()
        .into_iter()
        .find(|(id, _)| id == "django__django-11087")
        .expect("session")
        .1
}

#[test]
fn manual_trim_happens_under_the_threshold_once() {
    let h = history();
    let mut e = engine(1_000_000);
    let o = opts(Format::OpenAi);
    let first = e.transform(&body(&h[..40]), &o).unwrap();
    assert!(!first.stats.trimmed);
    e.compact_now();
    assert!(e.status().manual_pending);
    let second = e.transform(&body(&h[..42]), &o).unwrap();
    assert!(second.stats.trimmed && second.stats.after_tokens < second.stats.before_tokens);
    let third = e.transform(&body(&h[..44]), &o).unwrap();
    assert!(
        !third.stats.trimmed && third.stats.prefix_reused,
        "one manual trim, then sticky again"
    );
    let s = e.status();
    assert_eq!(
        (s.trims, s.manual_pending, s.last_trim.unwrap().manual),
        (1, false, true)
    );
}

#[test]
fn a_reverted_history_falls_back_to_the_cut_it_still_contains() {
    let h = history();
    let reqs = requests(&h);
    let mut e = engine(8_000);
    let steps = replay(&mut e, &reqs, Format::OpenAi);
    let trims: Vec<usize> = (0..steps.len())
        .filter(|&k| steps[k].stats.trimmed)
        .collect();
    assert!(trims.len() >= 3, "needs several trims, got {}", trims.len());
    // Go back to just after the second trim: the second cut applies again, byte for byte.
    let k = trims[1] + 1;
    let again = e.transform(&body(&reqs[k]), &opts(Format::OpenAi)).unwrap();
    let refs: Vec<String> = reqs[k].iter().map(Value::to_string).collect();
    let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
    let rendered: Vec<Value> = serde_json::from_str(&again.rewrite.render(&refs)).unwrap();
    let rendered: Vec<String> = rendered.iter().map(Value::to_string).collect();
    assert_eq!(rendered, steps[k].output);
    assert!(!again.stats.trimmed);
    // Back before the first trim: no cut applies; the history is sent as it is.
    let early = e.transform(&body(&reqs[1]), &opts(Format::OpenAi)).unwrap();
    assert_eq!(early.stats.cut, 0);
    assert_eq!(early.stats.messages_after, reqs[1].len());
}

#[test]
fn status_counts_requests_and_fail_opens() {
    let h = history();
    let mut e = engine(16_000);
    let steps = replay(&mut e, &requests(&h), Format::OpenAi);
    e.record_fail_open("m", 1);
    let s = e.status();
    assert_eq!(s.usage.requests as usize, steps.len() + 1);
    assert_eq!(s.fail_opens, 1);
    assert_eq!(s.trims, steps.iter().filter(|x| x.stats.trimmed).count());
    assert_eq!(s.messages, h.len());
    assert!(s.usage.after_tokens < s.usage.before_tokens);
}

struct Bank(Vec<String>, bool);

impl smarter_compact::memory::recall::Recall for Bank {
    fn recall(&mut self, query: &str, limit: usize) -> smarter_compact::Result<Vec<String>> {
        assert!(!query.is_empty(), "the query is the last user turn's text");
        if self.1 {
            return Err(smarter_compact::Error::Store("bank offline".into()));
        }
        Ok(self.0.iter().take(limit).cloned().collect())
    }
}

fn engine_with_recall(
    recall_on: bool,
    bank: Bank,
) -> smarter_compact::Engine<smarter_compact::store::MemStore> {
    let cfg = smarter_compact::config::Config::resolve(
        &Default::default(),
        None,
        &serde_json::json!({"trimAtTokens": 8000, "compactionRecall": recall_on}),
    );
    let mut e =
        smarter_compact::Engine::open(smarter_compact::store::MemStore::default(), cfg).unwrap();
    e.set_recall(Box::new(bank), "s1");
    e
}

#[test]
fn recall_on_trim_adds_a_fenced_block_that_stays_between_trims() {
    let reqs = requests(&history());
    let memories = Bank(vec!["the flaky test needs a pinned seed".into()], false);
    let steps = replay(
        &mut engine_with_recall(true, memories),
        &reqs,
        Format::OpenAi,
    );
    let k = steps.iter().position(|s| s.stats.trimmed).expect("a trim");
    let with_block = |s: &common::Step| {
        s.output.iter().any(|m| {
            m.contains("<smarter-compact-recall untrusted=\\\"true\\\">")
                && m.contains("pinned seed")
        })
    };
    assert!(with_block(&steps[k]));
    assert!(
        with_block(&steps[k + 1]),
        "the block is part of the cut: it stays"
    );
    // Off by default, and a failing bank adds nothing and breaks nothing.
    let off = replay(
        &mut engine_with_recall(false, Bank(vec!["x".into()], false)),
        &reqs,
        Format::OpenAi,
    );
    assert!(!off.iter().any(with_block));
    let broken = replay(
        &mut engine_with_recall(true, Bank(vec![], true)),
        &reqs,
        Format::OpenAi,
    );
    assert!(broken.iter().all(|s| !s
        .output
        .iter()
        .any(|m| m.contains("smarter-compact-recall"))));
    assert_eq!(
        broken.iter().filter(|s| s.stats.trimmed).count(),
        off.iter().filter(|s| s.stats.trimmed).count()
    );
}

#[test]
fn protected_tools_are_never_compressed_nor_trimmed_from_the_in_flight_turn() {
    use serde_json::json;
    let cfg = smarter_compact::config::Config::resolve(
        &Default::default(),
        None,
        &json!({"trimAtTokens": 3000, "compressOverTokens": 300, "protectedTools": ["todowrite"]}),
    );
    let mut e =
        smarter_compact::Engine::open(smarter_compact::store::MemStore::default(), cfg).unwrap();
    let mut h = vec![json!({"role": "user", "content": "refactor the parser"})];
    let big = (0..400)
        .map(|i| format!("line {i} of output"))
        .collect::<Vec<_>>()
        .join("\n");
    for k in 0..12 {
        let tool = if k == 1 { "todowrite" } else { "bash" };
        h.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": tool, "arguments": "{}"}}]}));
        h.push(json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": big}));
    }
    let steps = replay(&mut e, &requests(&h), Format::OpenAi);
    let last = steps.last().unwrap();
    assert!(steps.iter().any(|s| s.stats.trimmed), "the session trims");
    let todo = last
        .output
        .iter()
        .find(|m| m.contains("\"tool_call_id\":\"c1\""))
        .expect("the protected exchange stays in flight");
    assert!(
        !todo.contains("output compressed"),
        "and is never compressed"
    );
    let unprotected = last
        .output
        .iter()
        .find(|m| m.contains("\"tool_call_id\":\"c11\""))
        .expect("the newest exchange stays");
    assert!(
        unprotected.contains("output compressed"),
        "unprotected outputs are compressed"
    );
    assert!(
        !last
            .output
            .iter()
            .any(|m| m.contains("\"tool_call_id\":\"c2\"")),
        "an unprotected old exchange left"
    );
}
