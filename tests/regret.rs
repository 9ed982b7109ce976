//! Trim regret: recalls of what a cut removed and calls made again after a cut removed them,
//! counted once per message and kept in the store across a restart.

mod common;

use common::store_env::{sql_engine, temp_db};
use common::{engine, replay, requests};
use serde_json::{json, Value};
use smarter_compact::facts::Regret;
use smarter_compact::format::Format;

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
}

fn result(id: &str, text: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": text})
}

/// A session whose early read of src/parse.py is cut at 2,000 tokens, then read again (same
/// arguments, other spacing), plus one recall and one call that only looks alike.
fn session() -> Vec<Value> {
    let filler = "x = compute(value)  # a line of the file\n".repeat(40);
    let mut h = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the parser."}),
        call("c1", "read", json!({"filePath": "src/parse.py"})),
        result("c1", &filler),
    ];
    for k in 0..8 {
        let id = format!("d{k}");
        h.push(call(
            &id,
            "bash",
            json!({"command": format!("cat src/mod{k}.py")}),
        ));
        h.push(result(&id, &filler));
    }
    h.push(
        json!({"role": "assistant", "tool_calls": [{"id": "r1", "type": "function",
        "function": {"name": "read", "arguments": "{ \"filePath\" :  \"src/parse.py\" }"}}]}),
    );
    h.push(result("r1", &filler));
    h.push(call("g1", "smart_compact_get", json!({"id": "3"})));
    h.push(result("g1", "x = compute(value)"));
    h.push(call("o1", "read", json!({"filePath": "src/other.py"})));
    h.push(result("o1", "y = 1"));
    h.push(json!({"role": "assistant", "content": "Done."}));
    h
}

#[test]
fn regret_counts_recalls_and_repeats_of_trimmed_calls_once() {
    let h = session();
    let mut e = engine(2_000);
    let steps = replay(&mut e, &requests(&h), Format::OpenAi);
    let cut_at = steps.iter().position(|s| s.stats.trimmed).expect("a cut");
    assert!(
        steps[cut_at].input.len() < h.len() - 6,
        "the cut comes before the repeat"
    );
    assert_eq!(
        e.status().regret,
        Regret {
            recalls: 1,
            repeats: 1
        }
    );
    // Sending the same requests again counts nothing new: each message is read once.
    replay(&mut e, &requests(&h)[steps.len() - 1..], Format::OpenAi);
    assert_eq!(
        e.status().regret,
        Regret {
            recalls: 1,
            repeats: 1
        }
    );
}

#[test]
fn without_a_cut_nothing_is_regret_and_the_totals_survive_a_restart() {
    let h = session();
    let mut wide = engine(1_000_000);
    replay(&mut wide, &requests(&h), Format::OpenAi);
    assert_eq!(wide.status().regret, Regret::default());

    let db = temp_db("regret-restart");
    {
        let mut e = sql_engine(&db, 2_000);
        replay(&mut e, &requests(&h), Format::OpenAi);
        assert_eq!(
            e.status().regret,
            Regret {
                recalls: 1,
                repeats: 1
            }
        );
    }
    let mut again = sql_engine(&db, 2_000);
    assert_eq!(
        again.status().regret,
        Regret {
            recalls: 1,
            repeats: 1
        }
    );
}
