//! The session store on a real SQLite (natively): schema, restart, recall, exact counts, the SQL
//! tool against a hostile corpus, paging.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::native_sql::{run_readonly, NativeSql};
use common::store_env::{sql_engine, temp_db};
use common::{load_sessions, replay, requests};
use serde_json::Value;
use smarter_compact::compress::lines;
use smarter_compact::format::Format;
use smarter_compact::store::{migrate, scalar, Scope, Sql, SqlStore, SqlValue, SCHEMA_VERSION};

fn count(db: &mut NativeSql, sql: &str) -> i64 {
    scalar(db, sql, &[]).expect("count").as_i64()
}

#[test]
fn schema_is_versioned_and_migration_is_idempotent() {
    let path = temp_db("schema");
    let mut db = NativeSql::open(&path);
    migrate(&mut db).unwrap();
    migrate(&mut db).unwrap();
    assert_eq!(
        count(
            &mut db,
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ),
        SCHEMA_VERSION
    );
    for table in [
        "messages",
        "blobs",
        "output_lines",
        "blob_lines",
        "trims",
        "requests",
        "messages_fts",
        "lines_fts",
    ] {
        assert_eq!(
            count(
                &mut db,
                &format!("SELECT count(*) FROM sqlite_master WHERE name = '{table}'")
            ),
            1,
            "{table}"
        );
    }
    db.exec(
        "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
        &[],
    )
    .unwrap();
    let err = SqlStore::open(db).err().expect("newer schema refused");
    assert_eq!(err.code(), "E_STORE");
}

#[test]
fn a_restart_continues_with_the_same_bytes_and_no_duplicate_rows() {
    let (id, history) = load_sessions()
        .into_iter()
        .find(|(id, _)| id == "django__django-14349")
        .unwrap();
    let reqs = requests(&history);
    let single = replay(
        &mut sql_engine(&temp_db("single"), 8_000),
        &reqs,
        Format::OpenAi,
    );
    let path = temp_db("restart");
    let half = reqs.len() / 2;
    let mut first = replay(&mut sql_engine(&path, 8_000), &reqs[..half], Format::OpenAi);
    let second = replay(&mut sql_engine(&path, 8_000), &reqs[half..], Format::OpenAi);
    first.extend(second);
    for (k, (a, b)) in single.iter().zip(&first).enumerate() {
        assert_eq!(
            a.output, b.output,
            "{id} request {k}: bytes differ after the restart"
        );
    }
    assert!(first.iter().filter(|s| s.stats.trimmed).count() >= 2);
    let mut db = NativeSql::open(&path);
    assert_eq!(
        count(&mut db, "SELECT count(*) FROM messages"),
        history.len() as i64
    );
    assert_eq!(
        count(&mut db, "SELECT count(DISTINCT fp) FROM messages"),
        history.len() as i64
    );
    assert_eq!(
        count(&mut db, "SELECT count(*) FROM requests"),
        reqs.len() as i64
    );
    assert!(
        count(
            &mut db,
            "SELECT count(*) FROM messages WHERE in_context = 0"
        ) > 0
    );
}

/// Candidate probe tokens of a line: identifiers (with `_`, digits or inner capitals: not plain
/// words), dotted or slashed paths, numbers of four digits or more, hex ids.
fn probe_tokens(line: &str) -> Vec<String> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || "_./-".contains(c)))
        .map(|t| t.trim_matches(|c: char| ".-/".contains(c)))
        .filter(|t| {
            let digits = t.chars().filter(char::is_ascii_digit).count();
            let letters = t.chars().filter(char::is_ascii_alphabetic).count();
            let inner_upper = t.chars().skip(1).any(|c| c.is_ascii_uppercase());
            let marked =
                t.contains('_') || t.contains('/') || t.contains('.') || inner_upper || digits > 0;
            (t.len() >= 6 && letters >= 3 && marked)
                || (digits >= 4 && letters == 0 && !t.contains('/'))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn trimmed_and_compressed_outputs_are_found_by_a_distinctive_probe() {
    let (mut probes, mut found, mut line_right, mut in_blob, mut no_distinctive) = (0, 0, 0, 0, 0);
    let mut misses = Vec::new();
    for (id, history) in load_sessions() {
        let path = temp_db("recall");
        let mut e = sql_engine(&path, 16_000);
        replay(&mut e, &requests(&history), Format::OpenAi);
        let mut db = NativeSql::open(&path);
        let outputs = db
            .query("SELECT m.seq, m.text, b.id FROM messages m LEFT JOIN blobs b ON b.seq = m.seq WHERE m.role = 'tool' AND (m.in_context = 0 OR b.id IS NOT NULL)", &[])
            .unwrap();
        // Document frequency of each candidate token over the tool outputs of the session.
        let all_texts: Vec<String> = db
            .query("SELECT text FROM messages WHERE role = 'tool'", &[])
            .unwrap()
            .into_iter()
            .map(|r| r[0].as_text())
            .collect();
        let mut df: HashMap<String, usize> = HashMap::new();
        for t in &all_texts {
            let mut seen: Vec<String> = lines(t).iter().flat_map(|l| probe_tokens(l)).collect();
            seen.sort();
            seen.dedup();
            for tok in seen {
                *df.entry(tok).or_default() += 1;
            }
        }
        for o in outputs {
            let (seq, text, blob) = (o[0].as_i64(), o[1].as_text(), o[2].clone());
            let best = lines(&text)
                .iter()
                .enumerate()
                .flat_map(|(n, l)| probe_tokens(l).into_iter().map(move |t| (t, n + 1)))
                .min_by_key(|(t, n)| (df.get(t).copied().unwrap_or(0), usize::MAX - t.len(), *n));
            // A distinctive line has a token no other tool output of the session contains; an
            // output without one (a repeated test run, say) has nothing to tell it apart.
            let Some((probe, _)) = best.filter(|(t, _)| df.get(t) == Some(&1)) else {
                no_distinctive += 1;
                continue;
            };
            probes += 1;
            let hits = e.search(&probe, 3, Scope::Trimmed, None).unwrap().hits;
            let want_lines: Vec<i64> = lines(&text)
                .iter()
                .enumerate()
                .filter(|(_, l)| l.contains(probe.as_str()))
                .map(|(n, _)| n as i64 + 1)
                .collect();
            match hits.iter().find(|h| h.seq == seq) {
                Some(h) => {
                    found += 1;
                    if blob != SqlValue::Null {
                        in_blob += 1;
                        if h.line.is_some_and(|l| want_lines.contains(&l))
                            && h.blob_id.as_deref() == Some(blob.as_text().as_str())
                        {
                            line_right += 1;
                        }
                    }
                }
                None => misses.push(format!("{id} seq {seq}: {probe}")),
            }
        }
    }
    let rate = found as f64 / probes as f64;
    eprintln!(
        "recall probes={probes} found_top3={found} ({rate:.3}) in_blob={in_blob} line_right={line_right} outputs_without_a_distinctive_token={no_distinctive}; misses: {:?}",
        &misses[..misses.len().min(10)]
    );
    assert!(probes > 300, "{probes} probes");
    assert!(rate >= 0.95, "top-3 recall {rate:.3}");
    assert_eq!(
        line_right, in_blob,
        "line number right for every hit inside a blob"
    );
}

#[test]
fn counts_over_all_tool_outputs_are_exact() {
    for (id, history) in load_sessions().into_iter().take(12) {
        let path = temp_db("count");
        replay(
            &mut sql_engine(&path, 16_000),
            &requests(&history),
            Format::OpenAi,
        );
        let outputs: Vec<&str> = history
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str())
            .collect();
        for pattern in ["Error", "def ", "import ", "test_", "<returncode>0"] {
            let expected = outputs
                .iter()
                .flat_map(|o| lines(o))
                .filter(|l| l.contains(pattern))
                .count();
            let sql =
                format!("SELECT count(*) FROM output_lines WHERE instr(text, '{pattern}') > 0");
            let got = run_readonly(&path, &sql, Duration::from_secs(5)).unwrap();
            assert_eq!(
                got.rows[0][0],
                Value::from(expected as i64),
                "{id} {pattern:?}"
            );
        }
    }
}

/// Statements a model (or a prompt injection) might try; each must be refused or bounded.
const HOSTILE: &[&str] = &[
    "DELETE FROM messages",
    "UPDATE messages SET text = 'x'",
    "INSERT INTO messages(seq) VALUES (1)",
    "REPLACE INTO meta VALUES ('schema_version', '0')",
    "DROP TABLE messages",
    "CREATE TABLE evil(x)",
    "ALTER TABLE messages ADD COLUMN x",
    "CREATE TRIGGER t AFTER INSERT ON messages BEGIN DELETE FROM messages; END",
    "ATTACH DATABASE '/tmp/evil.db' AS evil",
    "DETACH DATABASE main",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA query_only = 0",
    "VACUUM",
    "VACUUM INTO '/tmp/copy.db'",
    "REINDEX",
    "ANALYZE",
    "BEGIN; DELETE FROM messages; COMMIT",
    "SELECT 1; DELETE FROM messages",
    "SELECT 1; SELECT 2",
    "select 1;/* c */ delete from messages",
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('/tmp/x', 'y')",
    "SELECT zeroblob(2000000000)",
    "SELECT randomblob(2000000000)",
    "SELECT fts3_tokenizer('simple')",
    "WITH x AS (SELECT 1) DELETE FROM messages",
    "WITH x AS (SELECT 1) INSERT INTO meta VALUES ('a', 'b')",
    "SAVEPOINT s",
    "RELEASE s",
    "ROLLBACK",
    "COMMIT",
    "SELECT * FROM messages WHERE text = 'unterminated",
    "SELECT 1 /* unterminated comment",
    "EXPLAIN DELETE FROM messages",
    "",
    "   ;  ",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
    "WITH RECURSIVE r(s) AS (SELECT 'ab' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
    "SELECT printf('%.*c', 2000000000, 'x')",
    "SELECT a.text, b.text FROM output_lines a, output_lines b, output_lines c",
    "SELECT * FROM messages m1 JOIN messages m2 JOIN messages m3",
    "SELECT upsert FROM messages",
];

#[test]
fn hostile_sql_is_refused_or_bounded_and_the_file_stays_identical() {
    assert!(HOSTILE.len() >= 40);
    let (_, history) = load_sessions().into_iter().next().unwrap();
    let path = temp_db("hostile");
    {
        let mut e = sql_engine(&path, 16_000);
        replay(&mut e, &requests(&history), Format::OpenAi);
    }
    {
        let db = NativeSql::open(&path);
        db.0.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let mut outcomes: HashMap<&str, usize> = HashMap::new();
    for sql in HOSTILE {
        let outcome = match run_readonly(&path, sql, Duration::from_millis(500)) {
            Err(e) => e.code(),
            Ok(rows) if rows.truncated || rows.rows.len() <= 200 => "bounded",
            Ok(_) => panic!("{sql}: unbounded result"),
        };
        assert!(
            ["E_SQL_REFUSED", "E_SQL", "bounded"].contains(&outcome),
            "{sql}: {outcome}"
        );
        *outcomes.entry(outcome).or_default() += 1;
    }
    eprintln!("hostile SQL outcomes: {outcomes:?}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "database file changed"
    );
}

#[test]
fn get_pages_through_a_compressed_output() {
    let (_, history) = load_sessions()
        .into_iter()
        .find(|(id, _)| id == "psf__requests-1142")
        .unwrap();
    let path = temp_db("get");
    let mut e = sql_engine(&path, 16_000);
    replay(&mut e, &requests(&history), Format::OpenAi);
    let mut db = NativeSql::open(&path);
    let blob = db
        .query(
            "SELECT id, lines, text FROM blobs ORDER BY length(text) DESC LIMIT 1",
            &[],
        )
        .unwrap()
        .remove(0);
    let (blob_id, total, text) = (
        blob[0].as_text(),
        blob[1].as_i64() as usize,
        blob[2].as_text(),
    );
    let page = e.get(&blob_id, None, None, None).unwrap();
    assert_eq!((page.start_line, page.total_lines), (1, total));
    assert!(page.text.len() <= smarter_compact::store::PAGE_BYTES + 300);
    let mut at = page.end_line + 1;
    let mut joined = page.text.clone();
    let mut pages = 1;
    while at <= total && pages < 10_000 {
        let p = e.get(&blob_id, Some(at), None, None).unwrap();
        joined.push_str(&p.text);
        at = p.end_line + 1;
        pages += 1;
    }
    if !joined.contains("continues for") {
        assert_eq!(
            joined,
            lines(&text)
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            "pages add up to the full text"
        );
    }
    assert_eq!(
        e.get("0123456789abcdef", None, None, None)
            .unwrap_err()
            .code(),
        "E_NOT_FOUND"
    );
    assert_eq!(
        e.get("../../etc/passwd", None, None, None)
            .unwrap_err()
            .code(),
        "E_BAD_ID"
    );
    assert_eq!(
        e.get(&blob_id, Some(total + 5), None, None)
            .unwrap_err()
            .code(),
        "E_ARG"
    );
    assert_eq!(
        e.get(&blob_id, Some(5), Some(2), None).unwrap_err().code(),
        "E_ARG"
    );
    assert!(
        e.get("3", None, None, None).unwrap().text.len() > 10,
        "a message by number"
    );
}

#[test]
fn get_with_grep_pages_through_the_matching_lines() {
    // A 10,000-line output where every 25th line says "error": 400 matches, two pages of 200.
    let log: String = (1..=10_000)
        .map(|i| {
            if i % 25 == 0 {
                format!("E{i}: ERROR in step {i}\n")
            } else {
                format!("step {i} ok\n")
            }
        })
        .collect();
    let history = vec![
        serde_json::json!({"role": "user", "content": "run the build"}),
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"make\"}"}}]}),
        serde_json::json!({"role": "tool", "tool_call_id": "c1", "content": log}),
        serde_json::json!({"role": "user", "content": "which steps failed?"}),
    ];
    let path = temp_db("grep");
    let mut e = sql_engine(&path, 16_000);
    replay(&mut e, &requests(&history), Format::OpenAi);
    let mut db = NativeSql::open(&path);
    let id = db
        .query("SELECT id FROM blobs LIMIT 1", &[])
        .unwrap()
        .remove(0)[0]
        .as_text();

    let first = e.get(&id, None, None, Some("error")).unwrap();
    assert_eq!(first.matches, Some(400));
    assert_eq!(first.text.lines().count(), 200);
    assert!(first.text.starts_with("25: E25: ERROR in step 25\n"));
    assert!(first.text.contains("\n5000: E5000: ERROR in step 5000\n"));
    let next = first.next.clone().expect("a second page");
    assert_eq!(
        next,
        format!("smart_compact_get(id=\"{id}\", grep=\"error\", start_line=5001)")
    );
    let second = e.get(&id, Some(5001), None, Some("error")).unwrap();
    assert_eq!(second.text.lines().count(), 200);
    assert!(second
        .text
        .ends_with("10000: E10000: ERROR in step 10000\n"));
    assert_eq!(second.next, None);
    assert!(second
        .render()
        .contains("grep=\"error\": 200 of lines 5001–10000 (of 10000) match"));

    // A range, alternatives, no match, and bad greps.
    let some = e
        .get(&id, Some(90), Some(110), Some("E100:|step 95 "))
        .unwrap();
    assert_eq!(some.text, "95: step 95 ok\n100: E100: ERROR in step 100\n");
    let none = e.get(&id, None, None, Some("no such text")).unwrap();
    assert_eq!(
        (none.matches, none.text.as_str(), none.next),
        (Some(0), "", None)
    );
    assert_eq!(
        e.get(&id, None, None, Some(" | ")).unwrap_err().code(),
        "E_ARG"
    );
    let long = "x".repeat(smarter_compact::store::GREP_MAX_BYTES + 1);
    assert_eq!(
        e.get(&id, None, None, Some(&long)).unwrap_err().code(),
        "E_ARG"
    );
    // Not a grep: an empty text pages as before.
    assert_eq!(e.get(&id, None, None, Some("")).unwrap().matches, None);
}
