//! Undo and cache-cold cuts: lifting the latest cut (in the same process and from another one
//! over the same store file), the hold that follows, and early cuts after an idle gap.

mod common;

use common::native_sql::NativeSql;
use common::store_env::temp_db;
use common::{engine, load_sessions, opts, replay, requests};
use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::engine::{Engine, Outcome, TransformOptions};
use smarter_compact::format::Format;
use smarter_compact::store::{SqlStore, Store};

fn body(msgs: &[Value]) -> String {
    serde_json::to_string(msgs).expect("json")
}

fn reqs() -> Vec<Vec<Value>> {
    let h = load_sessions()
        .into_iter()
        .find(|(id, _)| id == "django__django-11087")
        .expect("session")
        .1;
    requests(&h)
}

/// The rewritten request as JSON texts, one per message.
fn rendered(out: &Outcome, req: &[Value]) -> Vec<String> {
    let texts: Vec<String> = req.iter().map(Value::to_string).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let v: Vec<Value> = serde_json::from_str(&out.rewrite.render(&refs)).expect("render");
    v.iter().map(Value::to_string).collect()
}

/// Indices of the requests that made a new cut.
fn trims(steps: &[common::Step]) -> Vec<usize> {
    (0..steps.len())
        .filter(|&k| steps[k].stats.trimmed)
        .collect()
}

#[test]
fn restore_lifts_the_latest_cut_and_the_next_request_extends_the_one_before_it() {
    let reqs = reqs();
    let mut e = engine(8_000);
    let steps = replay(&mut e, &reqs, Format::OpenAi);
    let t = trims(&steps);
    assert!(t.len() >= 3, "needs several trims, got {}", t.len());
    // Replay again, up to just after the second cut, in a fresh engine.
    let mut e = engine(8_000);
    let second = t[1];
    let upto = replay(&mut e, &reqs[..=second], Format::OpenAi);
    assert!(upto[second].stats.trimmed && upto[second].stats.cut == 2);
    let plan = e.request_restore().expect("restore");
    assert_eq!((plan.pending, plan.cut), (1, Some(2)));
    assert!(plan.messages > 0 && plan.cache_write_tokens > 0, "{plan:?}");
    assert_eq!(e.status().restores_pending, 1);

    let next = &reqs[second + 1];
    let out = e
        .transform(&body(next), &opts(Format::OpenAi))
        .expect("transform");
    let r = out.stats.restored.clone().expect("restored");
    assert_eq!((r.cuts.as_slice(), out.stats.cut), (&[2][..], 1));
    assert!(
        !out.stats.trimmed,
        "the hold keeps the cut from being made again at once"
    );
    assert!(r.cache_write_tokens > 0 && r.hold_below > u64::from(out.stats.trim_at));
    let before_cut = &upto[second - 1].output;
    let now = rendered(&out, next);
    assert_eq!(
        &now[..before_cut.len()],
        &before_cut[..],
        "the request extends the last one sent before the lifted cut, byte for byte"
    );
    let notice = out.stats.notice.expect("a notice");
    assert!(notice.contains("cut #2 lifted"), "{notice}");
    let s = e.status();
    assert_eq!((s.restores_pending, s.lifted_trims), (0, 1));
    assert_eq!(s.hold_below, Some(r.hold_below));

    // Held until the request grows past hold_below, then trimmed again as usual.
    let mut trimmed_at = None;
    for (k, req) in reqs.iter().enumerate().skip(second + 2) {
        let out = e
            .transform(&body(req), &opts(Format::OpenAi))
            .expect("transform");
        if out.stats.trimmed {
            trimmed_at = Some(k);
            break;
        }
        assert!(
            out.stats.after_tokens < r.hold_below,
            "held only below hold_below"
        );
        assert!(
            out.stats.prefix_reused,
            "the restored prefix stays put while held"
        );
    }
    assert!(
        trimmed_at.is_some(),
        "trims resume once the request passes the hold"
    );
    assert_eq!(e.status().hold_below, None, "a new cut ends the hold");
}

#[test]
fn a_manual_trim_after_a_restore_cuts_again_and_nothing_to_restore_asks_nothing() {
    let reqs = reqs();
    let mut e = engine(8_000);
    let none = e.request_restore().expect("restore");
    assert_eq!((none.pending, none.cut), (0, None));
    assert_eq!(e.status().restores_pending, 0);
    let steps = replay(&mut e, &reqs, Format::OpenAi);
    let first = trims(&steps)[0];
    let mut e = engine(8_000);
    replay(&mut e, &reqs[..=first], Format::OpenAi);
    e.request_restore().expect("restore");
    let back = e
        .transform(&body(&reqs[first + 1]), &opts(Format::OpenAi))
        .unwrap();
    assert_eq!(
        back.stats.cut, 0,
        "the only cut lifted: the request goes out whole"
    );
    assert_eq!(back.stats.messages_after, reqs[first + 1].len());
    e.compact_now();
    let again = e
        .transform(&body(&reqs[first + 2]), &opts(Format::OpenAi))
        .unwrap();
    assert!(again.stats.trimmed && again.stats.cut == 2);
    assert!(e.status().hold_below.is_none());
}

#[test]
fn a_restore_asked_by_another_process_is_made_by_the_host_on_its_next_request() {
    let reqs = reqs();
    let path = temp_db("restore");
    let config = || Config::resolve(&Default::default(), None, &json!({"trimAtTokens": 8000}));
    let open = || SqlStore::open(NativeSql::open(&path)).expect("store");
    let steps = replay(&mut engine(8_000), &reqs, Format::OpenAi);
    let first = trims(&steps)[0];
    let mut host = Engine::open(open(), config()).expect("host");
    replay(&mut host, &reqs[..=first], Format::OpenAi);
    // The command line: its own engine over the same file.
    let mut cli = Engine::open(open(), config()).expect("cli");
    assert_eq!(cli.request_restore().expect("restore").cut, Some(1));
    drop(cli);
    let out = host
        .transform(&body(&reqs[first + 1]), &opts(Format::OpenAi))
        .unwrap();
    assert_eq!(out.stats.restored.map(|r| r.cuts), Some(vec![1]));
    assert_eq!(out.stats.cut, 0);
    // A restart keeps the lift and the hold.
    drop(host);
    let mut again = Engine::open(open(), config()).expect("reopen");
    let s = again.status();
    assert_eq!((s.lifted_trims, s.restores_pending), (1, 0));
    assert!(s.hold_below.is_some());
    let out = again
        .transform(&body(&reqs[first + 2]), &opts(Format::OpenAi))
        .unwrap();
    assert_eq!((out.stats.cut, out.stats.trimmed), (0, false));
    assert!(out.stats.prefix_reused);
    let in_context = again.store_mut().counts().expect("counts");
    assert_eq!(
        in_context.in_context, in_context.messages,
        "every message is back"
    );
}

/// The threshold of the cache-cold test: the session grows slowly below it for many requests.
const T: u32 = 30_000;

/// Replays `reqs` with the host clock at `gaps_ms` apart (one entry per request).
fn replay_at(e: &mut Engine<impl Store>, reqs: &[Vec<Value>], at: &[u64]) -> Vec<Outcome> {
    reqs.iter()
        .zip(at)
        .map(|(req, &now_ms)| {
            let o = TransformOptions {
                now_ms,
                ..opts(Format::OpenAi)
            };
            e.transform(&body(req), &o).expect("transform")
        })
        .collect()
}

#[test]
fn an_idle_gap_past_the_cache_lifetime_cuts_early_and_says_so() {
    let reqs = reqs();
    let mut probe = engine(T);
    let steps = replay(&mut probe, &reqs, Format::OpenAi);
    // The first request past trim_to_fraction × trim_at, well before the first trim.
    let first_trim = trims(&steps)[0];
    let k = first_trim - 1;
    assert!(steps[k].input.len() >= 10, "{}", steps[k].input.len());
    assert!(steps[k].stats.after_tokens as f64 > 0.3 * f64::from(T) && !steps[k].stats.trimmed);
    let minute = 60_000;
    let mut clock: Vec<u64> = (0..reqs.len() as u64)
        .map(|i| 1_000_000 + i * 1000)
        .collect();
    let shift = |clock: &mut Vec<u64>, from: usize, by: u64| {
        for t in &mut clock[from..] {
            *t += by;
        }
    };
    // Four minutes idle: the cache is still warm, nothing happens early.
    let mut warm = clock.clone();
    shift(&mut warm, k, 4 * minute);
    let mut e = engine(T);
    let out = replay_at(&mut e, &reqs[..=k], &warm[..=k]);
    assert!(!out[k].stats.trimmed);
    // Six minutes idle: the cache has expired; the request is cut down now, for free.
    shift(&mut clock, k, 6 * minute);
    let mut e = engine(T);
    let out = replay_at(&mut e, &reqs[..=k], &clock[..=k]);
    let s = &out[k].stats;
    assert!(s.trimmed && s.cache_cold, "{s:?}");
    assert!(s.after_tokens < s.before_tokens);
    assert!(s
        .notice
        .as_deref()
        .unwrap_or("")
        .contains("prompt cache had expired"));
    assert_eq!(e.status().cache_cold_trims, 1);
    // The same gap with the lifetime turned off for the model: no early cut.
    let config = Config::resolve(
        &Default::default(),
        Some("[context_proxy.cache_ttl]\ntest = 0\n"),
        &json!({"trimAtTokens": T}),
    );
    let mut e = Engine::open(smarter_compact::store::MemStore::default(), config).unwrap();
    let out = replay_at(&mut e, &reqs[..=k], &clock[..=k]);
    assert!(!out[k].stats.trimmed);
    // The host's word wins: an hour-long cache asked for by the request stays warm.
    let mut e = engine(T);
    let at_hour: Vec<Outcome> = reqs[..=k]
        .iter()
        .zip(&clock)
        .map(|(req, &now_ms)| {
            let o = TransformOptions {
                now_ms,
                cache_ttl_ms: 3_600_000,
                ..opts(Format::OpenAi)
            };
            e.transform(&body(req), &o).expect("transform")
        })
        .collect();
    assert!(!at_hour[k].stats.trimmed);
}
