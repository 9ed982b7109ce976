//! What cuts teach the memory bank: the memories a cut writes (real SQLite), that writing the
//! same cuts again adds none, that another session recalls them and the same session does not,
//! and that a bank that fails never fails a request.

mod common;

use common::native_sql::NativeSql;
use common::store_env::temp_db;
use common::{replay, requests, Step};
use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::format::Format;
use smarter_compact::memory::bank::Bank;
use smarter_compact::store::MemStore;
use smarter_compact::Engine;

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
}

fn result(id: &str, text: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": text})
}

const FILLER: &str = "x = compute(value)  # a line of the file\n";

/// A session that reads a file, runs a test that fails, edits the file, runs the test again
/// and it passes, then searches other modules until it is cut at 2,000 tokens.
fn fixing_session(task: &str, module: &str) -> Vec<Value> {
    let filler = FILLER.repeat(40);
    let test = json!({"command": "python -m pytest tests/test_parse.py -x"});
    let mut h = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": task}),
        call("c1", "read", json!({"filePath": module})),
        result("c1", &filler),
        call("c2", "bash", test.clone()),
        result(
            "c2",
            &format!("{filler}FAILED tests/test_parse.py::test_header - AssertionError: 3 != 4\nexit code 1"),
        ),
        call("c3", "edit", json!({"filePath": module, "oldString": "n + 1", "newString": "n"})),
        result("c3", "edited"),
        call("c4", "bash", test),
        result("c4", "1 passed in 0.02s\nexit code 0"),
    ];
    for k in 0..8 {
        let id = format!("d{k}");
        let cmd = format!("grep -n parse_header src/mod{k}.py");
        h.push(call(&id, "bash", json!({ "command": cmd })));
        h.push(result(&id, &filler));
    }
    h.push(json!({"role": "user", "content": "Carry on with the remaining modules."}));
    h.push(call("e1", "bash", json!({"command": "ls"})));
    h.push(result("e1", "a\nb"));
    h
}

/// A session about a related bug that never touches src/parse.py itself.
fn related_session() -> Vec<Value> {
    let filler = FILLER.repeat(40);
    let mut h = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "The parser test test_header fails again after the header change; find out why."}),
    ];
    for k in 0..10 {
        let id = format!("r{k}");
        let cmd = format!("sed -n 1,80p src/headers{k}.py");
        h.push(call(&id, "bash", json!({ "command": cmd })));
        h.push(result(&id, &filler));
    }
    h
}

fn bank_engine(path: &std::path::Path, session: &str, recall: bool) -> Engine<MemStore> {
    let opts = json!({"trimAtTokens": 2_000, "digestFraction": 0.2, "compactionRecall": recall});
    let config = Config::resolve(&Default::default(), None, &opts);
    let mut e = Engine::open(MemStore::default(), config).expect("open");
    e.set_recall(
        Box::new(Bank::open(NativeSql::open(path)).expect("bank")),
        session,
    );
    e
}

/// Every memory of the bank at `path`: (kind, text, source), in order of writing.
fn memories(path: &std::path::Path) -> Vec<(String, String, String)> {
    let c = rusqlite::Connection::open(path).expect("open");
    let mut st = c
        .prepare("SELECT kind, text, source FROM memories ORDER BY id")
        .expect("prepare");
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

fn recall_blocks(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .flat_map(|s| s.output.iter())
        .filter_map(|m| {
            let at = m.find("<smarter-compact-recall")?;
            let end = m[at..].find("</smarter-compact-recall>")? + at;
            Some(m[at..end].to_string())
        })
        .collect()
}

const TASK: &str = "Fix the failing parser test in src/parse.py.";

#[test]
fn a_cut_writes_its_files_and_fixed_failures_once() {
    let path = temp_db("bank-learn");
    let h = fixing_session(TASK, "src/parse.py");
    let steps = replay(
        &mut bank_engine(&path, "s1", false),
        &requests(&h),
        Format::OpenAi,
    );
    assert!(steps.iter().any(|s| s.stats.trimmed), "the session is cut");
    let written = memories(&path);
    assert!(written
        .iter()
        .all(|(kind, _, source)| kind == "cut" && source.starts_with("s1 #")));
    let texts: Vec<&str> = written.iter().map(|m| m.1.as_str()).collect();
    let failed = "`python -m pytest tests/test_parse.py -x` failed with \"FAILED tests/test_parse.py::test_header - \
                  AssertionError: 3 != 4\"";
    assert!(
        texts.contains(&format!("{failed}; it passed after editing src/parse.py").as_str()),
        "{texts:#?}"
    );
    assert!(
        !texts.contains(&failed),
        "the failure is written once, with its fix"
    );
    assert!(texts.contains(&format!("edited src/parse.py while working on: {TASK}").as_str()));
    assert!(texts.contains(&format!("read src/mod0.py while working on: {TASK}").as_str()));
    assert!(
        !texts.iter().any(|t| t.starts_with("User asked")),
        "the user turns are still in the request"
    );
    // The fixed failure names the failing and the passing runs.
    let fixed = written.iter().find(|m| m.1.contains("it passed")).unwrap();
    assert_eq!(fixed.2.matches(" #").count(), 2, "{}", fixed.2);
    // The same cuts again (a restarted host replaying the session): nothing new.
    let again = replay(
        &mut bank_engine(&path, "s1", false),
        &requests(&h),
        Format::OpenAi,
    );
    assert!(again.iter().any(|s| s.stats.trimmed));
    assert_eq!(memories(&path), written);
}

#[test]
fn another_session_recalls_the_files_and_fixes_and_the_same_one_does_not() {
    let path = temp_db("bank-recall");
    let first = fixing_session(TASK, "src/parse.py");
    let own = replay(
        &mut bank_engine(&path, "s1", true),
        &requests(&first),
        Format::OpenAi,
    );
    assert!(own.iter().any(|s| s.stats.trimmed));
    assert!(!memories(&path).is_empty());
    assert!(
        recall_blocks(&own).is_empty(),
        "a session does not recall what it wrote itself"
    );
    let second = related_session();
    let other = replay(
        &mut bank_engine(&path, "s2", true),
        &requests(&second),
        Format::OpenAi,
    );
    let blocks = recall_blocks(&other);
    assert!(!blocks.is_empty(), "the related session recalls");
    assert!(
        blocks.iter().any(|b| b.contains("src/parse.py")),
        "the block names the first session's file: {blocks:#?}"
    );
    assert!(blocks
        .iter()
        .any(|b| b.contains("it passed after editing src/parse.py")));
    // Its own memories (files it read) are in the bank, but not in its block.
    let own_files: Vec<String> = memories(&path)
        .into_iter()
        .filter(|m| m.2.starts_with("s2 #"))
        .map(|m| m.1)
        .collect();
    assert!(own_files
        .iter()
        .any(|t| t.starts_with("read src/headers0.py")));
    assert!(
        !blocks.iter().any(|b| b.contains("src/headers")),
        "{blocks:#?}"
    );
}

#[test]
fn a_bank_that_fails_never_fails_a_request() {
    let path = temp_db("bank-broken");
    let mut e = bank_engine(&path, "s1", true);
    // The bank's tables go away under it: every write and every recall fails.
    let c = rusqlite::Connection::open(&path).expect("open");
    c.execute_batch("DROP TABLE memories; DROP TABLE memories_fts;")
        .expect("drop");
    let h = fixing_session(TASK, "src/parse.py");
    let broken = replay(&mut e, &requests(&h), Format::OpenAi);
    let opts = json!({"trimAtTokens": 2_000, "digestFraction": 0.2, "compactionRecall": true});
    let config = Config::resolve(&Default::default(), None, &opts);
    let mut plain = Engine::open(MemStore::default(), config).expect("open");
    let without = replay(&mut plain, &requests(&h), Format::OpenAi);
    assert!(broken.iter().any(|s| s.stats.trimmed));
    let outputs = |s: &[Step]| s.iter().map(|x| x.output.clone()).collect::<Vec<_>>();
    assert_eq!(
        outputs(&broken),
        outputs(&without),
        "the same requests as with no bank"
    );
}

#[test]
fn recall_elsewhere_leaves_out_exactly_the_sessions_own_memories() {
    use smarter_compact::memory::recall::Recall;
    let path = temp_db("bank-elsewhere");
    let mut bank = Bank::open(NativeSql::open(&path)).expect("bank");
    for (text, source) in [
        ("edited src/lexer.rs while working on: tabs", "s1 #4"),
        ("distilled: the lexer rejects tabs", "s1"),
        ("read src/lexer.rs while working on: lexer speed", "s10 #2"),
        ("the lexer note of someone", ""),
    ] {
        bank.add("cut", text, source, 1).expect("add");
    }
    let mut found = bank.recall_elsewhere("lexer", 10, "s1").expect("recall");
    found.sort();
    assert_eq!(
        found,
        [
            "read src/lexer.rs while working on: lexer speed",
            "the lexer note of someone"
        ]
    );
    assert_eq!(bank.recall("lexer", 10).expect("recall").len(), 4);
    // A file first read then edited for the same task is recalled once, as the better ranked.
    bank.add(
        "cut",
        "read src/parser.rs while working on: tabs",
        "s2 #3",
        1,
    )
    .expect("add");
    bank.add(
        "cut",
        "edited src/parser.rs while working on: tabs",
        "s2 #3 #9",
        1,
    )
    .expect("add");
    let parser = bank
        .recall_elsewhere("parser tabs", 10, "s1")
        .expect("recall");
    assert_eq!(
        parser
            .iter()
            .filter(|t| t.contains("src/parser.rs"))
            .count(),
        1,
        "{parser:?}"
    );
}
