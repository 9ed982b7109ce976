//! Supersession at cut time: a kept tool result that a later kept one makes redundant (a file
//! read again, the same call with the same output) is sent as a one-line reference when a cut is
//! made, never before, and the same bytes go out on every request until the next cut, after a
//! restart too, in every wire and host format.

mod common;

use common::hosts::{self, check_host_replay};
use common::invariants::{check, Tally};
use common::store_env::{sql_engine, temp_db};
use common::{replay, Step};
use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::format::Format;
use smarter_compact::store::MemStore;
use smarter_compact::trim::SUPERSEDED_PREFIX;
use smarter_compact::Engine;

/// One tool call of a scripted session: id, tool, arguments, output.
type Call = (&'static str, &'static str, Value, String);

/// One step of a scripted session.
enum Act {
    User(&'static str),
    Calls(Vec<Call>),
    Answer(&'static str),
}
use Act::{Answer, Calls, User};

fn one(id: &'static str, tool: &'static str, args: Value, out: String) -> Act {
    Calls(vec![(id, tool, args, out)])
}

/// Source text of a file, `version` telling versions apart.
fn source(version: u32, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("def helper_{i}(value):\n    return value + {version} * {i}\n"))
        .collect()
}

/// A session with large early outputs (trimmed by the cut) and, after them, a file read twice
/// (r1, r2), a partial read before and after (p1, p2), a repeated `git status` (g1, g2), a test
/// run whose output changed (t1, t2) and a last exchange.
fn session() -> Vec<Act> {
    let filler = |k: u32| format!("mod{k}: x = compute(value)  # a line of the file\n").repeat(40);
    let status = "On branch main\nChanges not staged for commit:\n  modified: src/x.py\n".repeat(2);
    let mut s = vec![User("Fix the failing test of src/x.py.")];
    for (k, id) in ["f0", "f1", "f2", "f3", "f4", "f5"].into_iter().enumerate() {
        let k = k as u32;
        s.push(one(
            id,
            "bash",
            json!({"command": format!("grep -rn compute src/mod{k}")}),
            filler(k),
        ));
    }
    s.extend([
        one(
            "p1",
            "read",
            json!({"filePath": "src/x.py", "offset": 1, "limit": 8}),
            source(1, 4),
        ),
        one("r1", "read", json!({"filePath": "src/x.py"}), source(1, 8)),
        one(
            "g1",
            "bash",
            json!({"command": "git status"}),
            status.clone(),
        ),
        one(
            "t1",
            "bash",
            json!({"command": "pytest tests/test_x.py"}),
            "1 failed, 3 passed\nFAILED tests/test_x.py::test_helper".into(),
        ),
        one(
            "e1",
            "edit",
            json!({"filePath": "src/x.py", "oldString": "+ 1", "newString": "+ 2"}),
            "edited".into(),
        ),
        one(
            "r2",
            "read",
            json!({"filePath": "./src/x.py"}),
            source(2, 8),
        ),
        one(
            "p2",
            "read",
            json!({"limit": 8, "filePath": "src/x.py", "offset": 9}),
            source(2, 4),
        ),
        one("g2", "bash", json!({"command": "git status"}), status),
        one(
            "t2",
            "bash",
            json!({"command": "pytest tests/test_x.py"}),
            "4 passed".into(),
        ),
        one(
            "l1",
            "bash",
            json!({"command": "ls src"}),
            "x.py\nmod0".into(),
        ),
        Answer("The test passes now."),
        User("Thanks. Also look at src/y.py."),
        one("y1", "read", json!({"filePath": "src/y.py"}), source(3, 2)),
        one("y2", "read", json!({"filePath": "src/y.py"}), source(3, 2)),
        Answer("src/y.py is fine."),
    ]);
    s
}

/// The session in the OpenAI chat format, or Anthropic's.
fn history(steps: &[Act], format: Format) -> Vec<Value> {
    let anthropic = format == Format::Anthropic;
    let mut h = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for s in steps {
        match s {
            User(t) => h.push(json!({"role": "user", "content": t})),
            Answer(t) if anthropic => {
                h.push(json!({"role": "assistant", "content": [{"type": "text", "text": t}]}))
            }
            Answer(t) => h.push(json!({"role": "assistant", "content": t})),
            Calls(calls) if anthropic => {
                let uses: Vec<Value> = calls
                    .iter()
                    .map(|(id, name, args, _)| json!({"type": "tool_use", "id": id, "name": name, "input": args}))
                    .collect();
                h.push(json!({"role": "assistant", "content": uses}));
                let results: Vec<Value> = calls
                    .iter()
                    .map(|(id, _, _, out)| json!({"type": "tool_result", "tool_use_id": id, "content": out}))
                    .collect();
                h.push(json!({"role": "user", "content": results}));
            }
            Calls(calls) => {
                let tc: Vec<Value> = calls
                    .iter()
                    .map(|(id, name, args, _)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
                    .collect();
                h.push(json!({"role": "assistant", "content": null, "tool_calls": tc}));
                for (id, _, _, out) in calls {
                    h.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
                }
            }
        }
    }
    h
}

fn engine_with(trim_at: u32, extra: Value) -> Engine<MemStore> {
    let mut opts = json!({ "trimAtTokens": trim_at });
    for (k, v) in extra.as_object().into_iter().flatten() {
        opts[k] = v.clone();
    }
    let config = Config::resolve(&Default::default(), None, &opts);
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    Engine::open(MemStore::default(), config).expect("open")
}

/// The threshold at which the first cut falls on request `k` exactly: the size request `k` is
/// sent at without any cut (requests only grow until the cut).
fn threshold_at(reqs: &[Vec<Value>], format: Format, k: usize) -> u32 {
    let probe = replay(&mut engine_with(10_000_000, json!({})), &reqs[..=k], format);
    assert!(probe.iter().all(|s| !s.stats.trimmed));
    u32::try_from(probe[k].stats.after_tokens).expect("size")
}

/// The request that first holds every result of the last step before the answer (`l1`).
fn cut_request(reqs: &[Vec<Value>]) -> usize {
    reqs.iter()
        .position(|r| r.iter().any(|m| m.to_string().contains("x.py\\nmod0")))
        .expect("a request with l1's result")
}

/// The text a rewritten request sends as the result of `call_id` (canonical formats).
fn result_text(output: &[String], call_id: &str) -> Option<String> {
    output.iter().find_map(|m| {
        let v: Value = serde_json::from_str(m).ok()?;
        if v["tool_call_id"] == call_id {
            return v["content"].as_str().map(str::to_string);
        }
        v["content"].as_array()?.iter().find_map(|b| {
            (b["tool_use_id"] == call_id).then(|| match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
    })
}

/// Runs the session in `format` with the first cut on the request that holds `l1`'s result.
fn run(format: Format) -> (Vec<Vec<Value>>, usize, u32, Vec<Step>) {
    let reqs = common::requests(&history(&session(), format));
    let k = cut_request(&reqs);
    let trim_at = threshold_at(&reqs, format, k);
    let steps = replay(&mut engine_with(trim_at, json!({})), &reqs, format);
    (reqs, k, trim_at, steps)
}

#[test]
fn a_reread_file_and_a_repeated_call_are_superseded_at_the_cut_and_not_before() {
    for format in [Format::OpenAi, Format::Anthropic] {
        let (reqs, k, trim_at, steps) = run(format);
        assert!(
            steps[k].stats.trimmed,
            "{format:?}: the cut falls on request {k}"
        );
        assert_eq!(steps.iter().filter(|s| s.stats.trimmed).count(), 1);
        // Before the cut: r2 and g2 are in the request, r1 and g1 go out whole.
        let before = &steps[k - 1].output;
        assert!(result_text(before, "r2").is_some() && result_text(before, "g2").is_some());
        assert_eq!(result_text(before, "r1"), Some(source(1, 8)));
        assert!(!before.iter().any(|m| m.contains(SUPERSEDED_PREFIX)));
        // At the cut: the early outputs left, the reads stayed.
        let out = &steps[k].output;
        assert_eq!(result_text(out, "f0"), None, "{format:?}: f0 is trimmed");
        let numbers: Vec<String> = (1..=reqs[k].len()).map(|n| format!("#{n}")).collect();
        let index_of = |id: &str| {
            reqs[k]
                .iter()
                .position(|m| {
                    m["tool_call_id"] == id
                        || m["content"]
                            .as_array()
                            .is_some_and(|b| b.iter().any(|b| b["tool_use_id"] == id))
                })
                .expect("result in request")
        };
        let r1 = result_text(out, "r1").expect("r1 is kept");
        assert_eq!(
            r1,
            format!(
                "{SUPERSEDED_PREFIX} {} (src/x.py read again; full text: smart_compact_get(id=\"{}\"))",
                numbers[index_of("r2")],
                index_of("r1") + 1
            ),
            "{format:?}"
        );
        // A whole read supersedes an earlier partial one; a partial read never a whole one.
        assert!(result_text(out, "p1")
            .expect("p1")
            .contains("src/x.py read again"));
        assert_eq!(result_text(out, "r2"), Some(source(2, 8)));
        assert_eq!(result_text(out, "p2"), Some(source(2, 4)));
        // The same call with the same output; the same call with another output stays.
        let g1 = result_text(out, "g1").expect("g1");
        assert!(
            g1.starts_with(&format!(
                "{SUPERSEDED_PREFIX} {} (same bash call, same output",
                numbers[index_of("g2")]
            )),
            "{g1}"
        );
        assert!(result_text(out, "t1").expect("t1").starts_with("1 failed"));
        assert_eq!(steps[k].stats.superseded_messages, 3, "{format:?}");
        assert!(steps[k].stats.superseded_tokens > 0);
        // After the cut nothing new is superseded, though y1 and y2 are the same read.
        let last = steps.last().expect("steps");
        assert_eq!(result_text(&last.output, "y1"), Some(source(3, 2)));
        assert_eq!(last.stats.superseded_messages, 3);
        let mut tally = Tally::default();
        check("session", &steps, format, trim_at, 3, &mut tally);
        assert!(
            tally.violations.is_empty(),
            "{format:?}: {:#?}",
            tally.violations
        );
    }
}

/// Golden: supersession never changes bytes between cuts. Every request after the cut starts
/// with the cut request's messages byte for byte, superseded results included, and a fresh
/// engine over the same SQLite store sends the same bytes after a restart.
#[test]
fn supersession_never_changes_bytes_between_cuts() {
    let (reqs, k, trim_at, steps) = run(Format::OpenAi);
    let cut = &steps[k];
    assert!(cut.stats.trimmed && cut.stats.superseded_messages > 0);
    for s in &steps[k + 1..] {
        assert!(!s.stats.trimmed);
        assert_eq!(s.stats.cut, cut.stats.cut);
        assert!(s.stats.prefix_reused);
        assert_eq!(&s.output[..cut.output.len()], &cut.output[..]);
        assert_eq!(s.stats.superseded_tokens, cut.stats.superseded_tokens);
    }
    let db = temp_db("supersede-restart");
    {
        let mut e = sql_engine(&db, trim_at);
        let before = replay(&mut e, &reqs[..=k], Format::OpenAi);
        assert_eq!(before[k].output, cut.output);
        // The reference's message number pages through the superseded result in full.
        let r1 = result_text(&cut.output, "r1").expect("r1");
        let id = r1
            .split("id=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .expect("id");
        let page = e.get(id, None, None, None).expect("get");
        assert!(page.text.contains("return value + 1 * 7"), "{}", page.text);
    }
    for restart in [k + 1, reqs.len() - 1] {
        let mut again = sql_engine(&db, trim_at);
        let after = replay(&mut again, &reqs[restart..=restart], Format::OpenAi);
        assert!(!after[0].stats.trimmed);
        assert_eq!(
            after[0].output, steps[restart].output,
            "after a restart at {restart}"
        );
    }
}

#[test]
fn the_last_exchange_is_never_superseded_and_the_switch_turns_it_off() {
    // The same pair of identical reads in an earlier exchange and in the last one: the earlier
    // pair is superseded by the last read, the last exchange stays whole.
    let mut steps = session();
    steps.truncate(17);
    let twice = |a: &'static str, b: &'static str| {
        Calls(vec![
            (a, "read", json!({"filePath": "src/z.py"}), source(5, 4)),
            (b, "read", json!({"filePath": "src/z.py"}), source(5, 4)),
        ])
    };
    steps.insert(8, twice("z1", "z2"));
    steps.push(twice("z3", "z4"));
    let reqs = common::requests(&history(&steps, Format::OpenAi));
    let k = reqs.len() - 1;
    let trim_at = threshold_at(&reqs, Format::OpenAi, k);
    let run = |extra: Value| replay(&mut engine_with(trim_at, extra), &reqs, Format::OpenAi);
    let on = run(json!({}));
    let out = &on[k].output;
    assert!(on[k].stats.trimmed);
    for id in ["z1", "z2"] {
        let text = result_text(out, id).expect("kept");
        assert!(text.contains("(same read of src/z.py;"), "{id}: {text}");
    }
    // z3 and z4 are the last exchange: the agent is looking at them.
    for id in ["z3", "z4"] {
        assert_eq!(result_text(out, id), Some(source(5, 4)), "{id}");
    }
    // Off: the same cut, nothing superseded.
    let off = run(json!({"supersede": false}));
    assert!(off[k].stats.trimmed);
    assert_eq!(off[k].stats.superseded_messages, 0);
    assert!(!off[k].output.iter().any(|m| m.contains(SUPERSEDED_PREFIX)));
    let env = [("CONTEXT_SUPERSEDE".to_string(), "0".to_string())].into();
    assert!(!Config::resolve(&env, None, &json!({})).supersede);
    assert!(Config::default().supersede);
}

#[test]
fn host_formats_keep_their_pairs_and_their_bytes_with_supersession() {
    let anthropic = history(&session(), Format::Anthropic);
    let openai = history(&session(), Format::OpenAi);
    for (format, items) in [
        (Format::OpenCode, hosts::to_opencode(&anthropic)),
        (Format::Responses, hosts::to_responses(&anthropic)),
        (Format::Pi, hosts::to_pi(&openai)),
    ] {
        let reqs = hosts::requests(format, &items);
        let k = cut_request(&reqs);
        let trim_at = threshold_at(&reqs, format, k);
        let mut tally = Tally::default();
        let mut e = engine_with(trim_at, json!({}));
        let outputs = check_host_replay(&mut e, format, &reqs, trim_at, &mut tally);
        assert!(
            tally.violations.is_empty(),
            "{format:?}: {:#?}",
            tally.violations
        );
        assert_eq!(tally.trims, 1, "{format:?}");
        let at_cut = outputs[k].join("\n");
        assert!(
            at_cut.contains("src/x.py read again"),
            "{format:?}: {at_cut}"
        );
        assert!(at_cut.contains("same bash call, same output"), "{format:?}");
        assert!(!outputs[k - 1].join("\n").contains(SUPERSEDED_PREFIX));
        assert!(e.status().last_trim.expect("a trim").superseded_messages >= 3);
    }
}
