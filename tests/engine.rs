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
    let rendered: Vec<Value> = serde_json::from_str(&again.plan.render(&refs)).unwrap();
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
