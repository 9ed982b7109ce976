//! The digest after the pointer: what it holds, its budget, and that it is frozen with its cut
//! (the same bytes on every request until the next cut, and after a restart).

mod common;

use common::store_env::{sql_engine, temp_db};
use common::{engine, load_sessions, replay, requests};
use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::digest::{build, files_touched, short_args, Entry, Parts, TouchKind};
use smarter_compact::format::Format;
use smarter_compact::message::{Block, Message, Role};
use smarter_compact::store::MemStore;
use smarter_compact::trim::POINTER_PREFIX;
use smarter_compact::Engine;

/// The pointer message's text in a rewritten request, if any.
fn pointer_of(output: &[String]) -> Option<String> {
    output.iter().find_map(|m| {
        let v: Value = serde_json::from_str(m).ok()?;
        let text = match &v["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return None,
        };
        text.contains(POINTER_PREFIX).then_some(text)
    })
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
}

fn result(id: &str, text: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": text})
}

/// A session with an early user instruction, file reads and edits, a failing test run and a
/// todo list, long enough to be cut at 2,000 tokens.
fn session() -> Vec<Value> {
    let filler = "x = compute(value)  # a line of the file\n".repeat(40);
    let mut h = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing parser test in src/parse.py."}),
        call("c1", "read", json!({"filePath": "src/parse.py"})),
        result("c1", &filler),
        json!({"role": "assistant", "content": "I read the parser."}),
        json!({"role": "user", "content": "Do not touch tests/fixtures: they are generated."}),
        call(
            "c2",
            "todowrite",
            json!({"todos": [{"content": "find the bug", "status": "completed"},
                              {"content": "fix parse_header", "status": "in_progress"}]}),
        ),
        result("c2", "ok"),
        call(
            "c3",
            "bash",
            json!({"command": "python -m pytest tests/test_parse.py -x"}),
        ),
        result(
            "c3",
            &format!(
                "{filler}FAILED tests/test_parse.py::test_header - AssertionError: 3 != 4\nexit code 1"
            ),
        ),
        call(
            "c4",
            "edit",
            json!({"filePath": "src/parse.py", "oldString": "n + 1", "newString": "n"}),
        ),
        result("c4", "edited"),
    ];
    for k in 0..6 {
        let id = format!("d{k}");
        h.push(call(
            &id,
            "bash",
            json!({"command": format!("grep -n parse_header src/mod{k}.py")}),
        ));
        h.push(result(&id, &filler));
    }
    h.push(json!({"role": "assistant", "content": "Now I check the last module."}));
    h.push(json!({"role": "user", "content": "Carry on."}));
    h.push(call("e1", "bash", json!({"command": "ls"})));
    h.push(result("e1", "a\nb"));
    h
}

fn run(h: &[Value], trim_at: u32) -> Vec<common::Step> {
    let mut e = engine(trim_at);
    replay(&mut e, &requests(h), Format::OpenAi)
}

/// The small test session at 2,000 tokens, with the largest digest share (400 tokens).
fn run_small(h: &[Value]) -> Vec<common::Step> {
    let opts = json!({"trimAtTokens": 2_000, "digestFraction": 0.2});
    let config = Config::resolve(&Default::default(), None, &opts);
    let mut e = Engine::open(MemStore::default(), config).expect("open");
    replay(&mut e, &requests(h), Format::OpenAi)
}

#[test]
fn the_digest_holds_instructions_calls_files_and_todo_within_budget() {
    let steps = run_small(&session());
    let cut = steps
        .iter()
        .find(|s| s.stats.trimmed)
        .expect("the session is cut at 2,000 tokens");
    let p = pointer_of(&cut.output).expect("a pointer");
    assert!(p.contains("Digest of what left the request"), "{p}");
    // The earlier instruction stays in the request, verbatim.
    assert!(cut
        .output
        .iter()
        .any(|m| m.contains("Do not touch tests/fixtures: they are generated.")));
    // A ToC line: the call, its result's number, exit status and the failure line.
    assert!(
        p.contains("bash: python -m pytest tests/test_parse.py -x → exit 1"),
        "{p}"
    );
    assert!(p.contains("AssertionError: 3 != 4"), "{p}");
    // Files touched with what was done where.
    assert!(p.contains("src/parse.py (read #3)"), "{p}");
    assert!(p.contains("#3→#4 read: src/parse.py → 40 lines"), "{p}");
    assert!(
        p.contains("Todo list (#7): [x] find the bug · [~] fix parse_header"),
        "{p}"
    );
    // Within the budget: 20% of the threshold.
    let budget = (0.2 * 2_000.0) as u64;
    assert!(cut.stats.digest_tokens > 0 && cut.stats.digest_tokens <= budget + 1);
}

#[test]
fn the_digest_is_frozen_with_its_cut_and_survives_a_restart() {
    let h = session();
    let reqs = requests(&h);
    let steps = run(&h, 2_000);
    let first = steps.iter().position(|s| s.stats.trimmed).expect("a cut");
    let frozen = pointer_of(&steps[first].output).expect("pointer");
    assert!(frozen.contains("Digest of"), "{frozen}");
    for s in &steps[first..] {
        if s.stats.cut == steps[first].stats.cut {
            assert_eq!(pointer_of(&s.output).as_deref(), Some(frozen.as_str()));
        }
    }
    // A new process over the same store sends the same bytes.
    let db = temp_db("digest-restart");
    {
        let mut e = sql_engine(&db, 2_000);
        replay(&mut e, &reqs[..=first], Format::OpenAi);
    }
    let mut again = sql_engine(&db, 2_000);
    let after = replay(&mut again, &reqs[first..=first], Format::OpenAi);
    assert_eq!(
        pointer_of(&after[0].output).as_deref(),
        Some(frozen.as_str())
    );
}

#[test]
fn digest_off_and_parts_are_configurable() {
    let h = session();
    for (opts, has, lacks) in [
        (
            json!({"trimAtTokens": 2_000, "digestFraction": 0}),
            "",
            "Digest of",
        ),
        (
            json!({"trimAtTokens": 2_000, "digestParts": "files"}),
            "Files touched:",
            "Trimmed tool calls",
        ),
        (
            json!({"trimAtTokens": 2_000, "digestParts": "toc"}),
            "Trimmed tool calls",
            "Files touched:",
        ),
    ] {
        let config = Config::resolve(&Default::default(), None, &opts);
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        let mut e = Engine::open(MemStore::default(), config).expect("open");
        let steps = replay(&mut e, &requests(&h), Format::OpenAi);
        let cut = steps.iter().find(|s| s.stats.trimmed).expect("a cut");
        let p = pointer_of(&cut.output).expect("pointer");
        assert!(p.contains(has) && !p.contains(lacks), "{opts}: {p}");
    }
    let bad = Config::resolve(
        &Default::default(),
        None,
        &json!({"digestParts": "users,nope"}),
    );
    assert_eq!(bad.digest_parts, Parts::ALL);
    assert_eq!(bad.warnings.len(), 1);
}

#[test]
fn on_the_real_sessions_the_digest_stays_within_its_budget() {
    let sessions = load_sessions();
    for trim_at in [8_000u32, 16_000] {
        let budget = (0.05 * f64::from(trim_at)) as u64 + 1;
        let (mut cuts, mut with_toc) = (0, 0);
        for (id, history) in sessions.iter().take(8) {
            for s in run(history, trim_at).iter().filter(|s| s.stats.trimmed) {
                cuts += 1;
                assert!(
                    s.stats.digest_tokens <= budget,
                    "{id}: {}",
                    s.stats.digest_tokens
                );
                let p = pointer_of(&s.output).expect("pointer");
                with_toc += p.contains("Trimmed tool calls") as usize;
            }
        }
        assert!(
            cuts > 0 && with_toc == cuts,
            "{with_toc}/{cuts} at {trim_at}"
        );
    }
}

fn msg(role: Role, blocks: Vec<Block>) -> Message {
    Message {
        role,
        blocks,
        synthetic: false,
    }
}

#[test]
fn shell_commands_name_the_files_they_touch() {
    let m = msg(
        Role::Assistant,
        vec![Block::ToolCall {
            id: "1".into(),
            name: "bash".into(),
            arguments: json!({"command": "cat src/a.py | grep x; sed -i 's/a/b/' lib/b.rs && \
echo hi > out/c.txt\ncat <<'EOF' > d.md\nnot/a/path.py inside the heredoc\nEOF"})
            .to_string(),
        }],
    );
    let e = [Entry {
        number: 4,
        kept: false,
        real_user: false,
        message: &m,
        compressed: &[],
        gists: None,
    }];
    let got: Vec<(String, TouchKind)> = files_touched(&e)
        .into_iter()
        .map(|t| (t.path, t.by[0].0))
        .collect();
    assert_eq!(
        got,
        vec![
            ("src/a.py".to_string(), TouchKind::Read),
            ("lib/b.rs".to_string(), TouchKind::Edited),
            ("out/c.txt".to_string(), TouchKind::Written),
            ("d.md".to_string(), TouchKind::Written),
        ]
    );
    // sed addresses, directories and one-segment words are not files
    let sed = msg(
        Role::Assistant,
        vec![Block::ToolCall {
            id: "2".into(),
            name: "bash".into(),
            arguments: json!({"command": "sed -n '1341s/)/x/;75s/' a/b.py; grep -rn /def tests/; ls src/lib"})
                .to_string(),
        }],
    );
    let e2 = [Entry {
        message: &sed,
        ..e[0]
    }];
    let paths: Vec<String> = files_touched(&e2).into_iter().map(|t| t.path).collect();
    assert_eq!(paths, ["a/b.py", "src/lib"]);
    // Responses/Codex calls reach the digest wrapped as {"arguments": "<json text>"}
    let wrapped = msg(
        Role::Assistant,
        vec![Block::ToolCall {
            id: "3".into(),
            name: "shell".into(),
            arguments: json!({"arguments": json!({"command": "cat src/x.py"}).to_string()})
                .to_string(),
        }],
    );
    let e3 = [Entry {
        message: &wrapped,
        ..e[0]
    }];
    assert_eq!(files_touched(&e3)[0].path, "src/x.py");
    assert_eq!(
        smarter_compact::digest::exchanges(&e3)[0].args,
        "cat src/x.py"
    );
    assert_eq!(short_args(r#"{"command":"ls  -la\n /tmp"}"#), "ls -la /tmp");
    assert_eq!(
        short_args(r#"{"filePath":"a/b.rs","offset":10,"limit":20}"#),
        "a/b.rs offset=10 limit=20"
    );
}

#[test]
fn long_user_turns_show_head_and_tail_and_a_tight_budget_condenses_old_calls() {
    let long = format!("START {} END", "word ".repeat(2_000));
    let user = msg(Role::User, vec![Block::Text(long)]);
    let calls: Vec<Message> = (0..60)
        .map(|k| {
            msg(
                Role::Assistant,
                vec![Block::ToolCall {
                    id: format!("c{k}"),
                    name: "bash".into(),
                    arguments: json!({"command": format!("pytest tests/test_{k}.py")}).to_string(),
                }],
            )
        })
        .collect();
    let mut entries = vec![Entry {
        number: 2,
        kept: false,
        real_user: true,
        message: &user,
        compressed: &[],
        gists: None,
    }];
    for (k, m) in calls.iter().enumerate() {
        entries.push(Entry {
            number: 3 + k as u64,
            kept: false,
            real_user: false,
            message: m,
            compressed: &[],
            gists: None,
        });
    }
    let d = build(&entries, 400, Parts::ALL);
    assert!(d.contains("#2: START") && d.contains("bytes left out] …") && d.contains(" END"));
    assert!(d.contains("older calls (bash ×"), "{d}");
    assert!(
        d.contains("pytest tests/test_59.py"),
        "the newest call is shown in full: {d}"
    );
    assert!(smarter_compact::tokens::estimate_text(&d) <= 400);
    // Nothing left out, or no budget: no digest.
    assert_eq!(build(&entries[..1], 10, Parts::ALL), "");
    let kept: Vec<Entry> = entries.iter().map(|e| Entry { kept: true, ..*e }).collect();
    assert_eq!(build(&kept, 400, Parts::ALL), "");
}

#[test]
fn the_names_part_lists_what_only_the_trimmed_messages_used() {
    let script =
        "cat <<'EOF' > reproduce_issue.py\nimport django\nfrom django.conf import settings\n\
settings.configure(INSTALLED_APPS=['app'], ROOT_URLCONF='urls')\nprint(QuerySet.delete)\nEOF";
    let write = msg(
        Role::Assistant,
        vec![Block::ToolCall {
            id: "w".into(),
            name: "bash".into(),
            arguments: json!({ "command": script }).to_string(),
        }],
    );
    let out = msg(
        Role::Tool,
        vec![Block::ToolResult {
            call_id: "w".into(),
            name: None,
            text: "Traceback: fast_deletes_batch failed in django/db/models/deletion.py".into(),
            is_error: false,
        }],
    );
    let kept = msg(
        Role::Assistant,
        vec![Block::Text(
            "Next I look at settings.configure again.".into(),
        )],
    );
    let entries = [
        Entry {
            number: 7,
            kept: false,
            real_user: false,
            message: &write,
            compressed: &[],
            gists: None,
        },
        Entry {
            number: 8,
            kept: false,
            real_user: false,
            message: &out,
            compressed: &[],
            gists: None,
        },
        Entry {
            number: 9,
            kept: true,
            real_user: false,
            message: &kept,
            compressed: &[],
            gists: None,
        },
    ];
    let names = Parts::parse("names").unwrap();
    let d = build(&entries, 200, names);
    assert!(d.contains("Names used in what left"), "{d}");
    let line7 = d.lines().find(|l| l.starts_with("#7:")).unwrap_or_default();
    for n in [
        "reproduce_issue.py",
        "INSTALLED_APPS",
        "ROOT_URLCONF",
        "QuerySet.delete",
    ] {
        assert!(line7.contains(n), "{n} under the message that used it: {d}");
    }
    let line8 = d.lines().find(|l| l.starts_with("#8:")).unwrap_or_default();
    assert!(
        line8.contains("fast_deletes_batch") && line8.contains("django/db/models/deletion.py"),
        "{d}"
    );
    // A name a kept message still shows is not repeated; plain words are not names.
    assert!(
        !d.contains("settings.configure") && !d.contains(" import "),
        "{d}"
    );
    // The newest message comes first; a tight budget keeps the digest within it.
    assert!(d.find("#8:") < d.find("#7:"), "{d}");
    let tight = build(&entries, 60, names);
    assert!(
        smarter_compact::tokens::estimate_text(&tight) <= 60,
        "{tight}"
    );
    assert_eq!(Parts::parse("all"), Some(Parts::ALL));
    assert_eq!(Parts::ALL.names(), "users,toc,files,todo,names");
}

#[test]
fn a_small_earlier_user_turn_stays_as_it_is_and_a_long_one_goes_to_the_digest() {
    let mut h = session();
    // a long instruction between the task and the last user turn
    let long = format!(
        "Use the vendored parser only. {}",
        "Keep the API stable. ".repeat(120)
    );
    h.insert(9, json!({"role": "user", "content": long}));
    let steps = run_small(&h);
    // the last request, under a cut made after both turns were in the middle
    let cut = steps.last().expect("requests");
    assert!(
        cut.stats.cut > 1,
        "cut again after the long turn: {:?}",
        cut.stats.cut
    );
    let small = "Do not touch tests/fixtures: they are generated.";
    let as_message = cut.output.iter().any(|m| {
        let v: Value = serde_json::from_str(m).unwrap_or_default();
        v["role"] == "user" && v["content"] == small
    });
    assert!(
        as_message,
        "the small turn is its own message: {:#?}",
        cut.output
    );
    let p = pointer_of(&cut.output).expect("a pointer");
    assert!(!p.contains(small), "not repeated in the digest: {p}");
    assert!(
        p.contains("Use the vendored parser only.") && p.contains("bytes left out] …"),
        "the long turn is in the digest as head … tail: {p}"
    );
}

/// A cut over a session longer than a cut reads back (one request of 12,000 messages) reads its
/// newest messages and every real user turn: an early long instruction is in the digest, a
/// file only the oldest messages touched is not (it stays in the store for the recall tools).
#[test]
fn a_cut_over_a_very_long_session_reads_the_newest_messages_and_every_user_turn() {
    let mut h = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Speed up the request loop in src/main.py."}),
        call("c0", "read", json!({"filePath": "src/oldest_module.py"})),
        result("c0", "def old():\n    pass"),
        json!({"role": "user", "content": format!(
            "Keep the public API of src/api.py unchanged. {}",
            "Callers outside this repository depend on every signature. ".repeat(60)
        )}),
    ];
    let mut k = 1;
    while h.len() < 12_000 {
        let command = format!("grep -n step_{k} src/main.py");
        h.push(call(
            &format!("c{k}"),
            "bash",
            json!({ "command": command }),
        ));
        h.push(result(&format!("c{k}"), &format!("{k}: step_{k}()")));
        k += 1;
    }
    h.push(json!({"role": "user", "content": "Now run the whole test suite."}));
    let body = serde_json::to_string(&h).expect("json");
    let out = engine(40_000)
        .transform(&body, &common::opts(Format::OpenAi))
        .expect("transform");
    assert!(out.stats.trimmed, "{:?}", out.stats);
    let texts: Vec<String> = h.iter().map(Value::to_string).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let rendered: Vec<Value> = serde_json::from_str(&out.rewrite.render(&refs)).expect("render");
    let rendered: Vec<String> = rendered.iter().map(Value::to_string).collect();
    let pointer = pointer_of(&rendered).expect("a pointer");
    assert!(
        pointer.contains("Keep the public API of src/api.py unchanged."),
        "{pointer}"
    );
    assert!(pointer.contains("src/main.py"), "{pointer}");
    assert!(!pointer.contains("oldest_module"), "{pointer}");
}
