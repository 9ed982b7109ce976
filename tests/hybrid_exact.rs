//! Hybrid search never buries an exact match: on a kv-store session (pages of `PUT key_<hex>`
//! records), natively over rusqlite with synthetic vectors that put the query nearer every page
//! but the one holding its key (as a bare `key_<hex>` embeds near any page of such records), the
//! pages holding the key come first, in full-text order; vectors add a paraphrase after them.

mod common;

use std::collections::HashMap;

use common::native_sql::NativeSql;
use common::store_env::{sql_engine, temp_db};
use common::{replay, requests};
use serde_json::{json, Value};
use smarter_compact::format::Format;
use smarter_compact::store::vectors::{pending, put, DIM};
use smarter_compact::store::{hybrid_search, scalar, Scope, Sql};

const PAGES: usize = 10;
const PER_PAGE: usize = 20;

fn key(page: usize, line: usize) -> String {
    format!("key_{:06x}", (page * 7919 + line * 104_729) % 0xff_ffff)
}

/// The session: a task, then one `read_records` call and its page of records per page, then a
/// prose message that says what a record lookup is for without naming any key.
fn kv_history() -> Vec<Value> {
    let mut h = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Read the write log of the key-value store."}),
    ];
    for p in 0..PAGES {
        let id = format!("call_read_records_{p}");
        h.push(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": "read_records", "arguments": format!("{{\"page\":{p}}}")}
            }]}),
        );
        let lines: Vec<String> = (0..PER_PAGE)
            .map(|l| {
                format!(
                    "PUT {} rev=1 {{\"owner\":\"Ada Byron\",\"region\":\"eu-west\",\"value\":\"amber-{:06x}\"}}",
                    key(p, l),
                    p * 1000 + l
                )
            })
            .collect();
        h.push(json!({"role": "tool", "tool_call_id": id, "content": lines.join("\n")}));
    }
    h.push(json!({"role": "assistant", "content": "The ledger says which owner wrote last; I will answer from it."}));
    h.push(json!({"role": "user", "content": "Thanks."}));
    h
}

fn unit(weights: &[(usize, f32)]) -> Vec<f32> {
    let mut v = vec![0.0; DIM];
    for &(i, w) in weights {
        v[i] += w;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

#[test]
fn hybrid_exact_identifier_matches_come_first_and_vectors_add_paraphrases_after() {
    let path = temp_db("hybrid-exact");
    replay(
        &mut sql_engine(&path, 1_000_000),
        &requests(&kv_history()),
        Format::OpenAi,
    );
    let mut db = NativeSql::open(&path);
    // The message of each page, and the prose message.
    let seqs: Vec<i64> = db
        .query(
            "SELECT seq FROM messages WHERE role = 'tool' ORDER BY seq",
            &[],
        )
        .unwrap()
        .into_iter()
        .map(|r| r[0].as_i64())
        .collect();
    assert_eq!(seqs.len(), PAGES);
    let prose = scalar(
        &mut db,
        "SELECT seq FROM messages WHERE text LIKE '%ledger%' AND role = 'assistant'",
        &[],
    )
    .unwrap()
    .as_i64();
    // Page p's chunks point along axis p + 1, the prose message's along axis 0, every other
    // chunk along an axis of its own.
    let seq_of: HashMap<String, i64> = db
        .query("SELECT hash, seq FROM chunks", &[])
        .unwrap()
        .into_iter()
        .map(|r| (r[0].as_text(), r[1].as_i64()))
        .collect();
    for (i, p) in pending(&mut db, 10_000).unwrap().iter().enumerate() {
        let seq = seq_of[&p.hash];
        let axis = match seqs.iter().position(|&s| s == seq) {
            Some(page) => page + 1,
            None if seq == prose => 0,
            None => PAGES + 1 + i,
        };
        put(&mut db, &p.hash, "test", &unit(&[(axis, 1.0)])).unwrap();
    }
    let mut first = 0;
    for (target, &page) in seqs.iter().enumerate() {
        // The query is near every other page (cosine 0.15, and each of them matches the
        // `terms:key` part too) and nearest the prose (0.89); orthogonal to the page holding its key.
        let mut near: Vec<(usize, f32)> = (0..PAGES)
            .filter(|&p| p != target)
            .map(|p| (p + 1, 1.0))
            .collect();
        near.push((0, 6.0));
        let qv = unit(&near);
        let query = key(target, 3);
        let fts = hybrid_search(&mut db, &query, 8, Scope::All, None).unwrap();
        assert_eq!(fts.hits[0].seq, page, "full-text finds the page");
        let found = hybrid_search(&mut db, &query, 20, Scope::All, Some(&qv)).unwrap();
        assert_eq!(found.mode, "hybrid");
        if found.hits[0].seq == page {
            first += 1;
        }
        assert!(
            found.hits[0].snippet.contains(&query),
            "the first hit shows the record: {:?}",
            found.hits[0]
        );
        // The paraphrase (no term of the query, nearest by meaning) comes after the exact match.
        let at = found.hits.iter().position(|h| h.seq == prose);
        assert!(
            at.is_some_and(|i| i > 0),
            "prose at {at:?}: {:?}",
            found.hits
        );
        assert!(found.how().starts_with("hybrid: exact matches first"));
    }
    assert_eq!(
        first, PAGES,
        "the page holding the key came first in every lookup"
    );
}

#[test]
fn hybrid_without_an_exact_match_fuses_full_text_and_vectors() {
    let path = temp_db("hybrid-fused");
    replay(
        &mut sql_engine(&path, 1_000_000),
        &requests(&kv_history()),
        Format::OpenAi,
    );
    let mut db = NativeSql::open(&path);
    let prose = scalar(
        &mut db,
        "SELECT seq FROM messages WHERE text LIKE '%ledger%' AND role = 'assistant'",
        &[],
    )
    .unwrap()
    .as_i64();
    let target = scalar(
        &mut db,
        "SELECT hash FROM chunks WHERE seq = ?",
        &[smarter_compact::store::SqlValue::Int(prose)],
    )
    .unwrap()
    .as_text();
    for (i, p) in pending(&mut db, 10_000).unwrap().iter().enumerate() {
        let axis = if p.hash == target { 0 } else { i + 1 };
        put(&mut db, &p.hash, "test", &unit(&[(axis, 1.0)])).unwrap();
    }
    // No row holds both words: "owner" is on every page, "zzqqx" nowhere. The prose message,
    // which holds "owner" too, is the query's vector: fusion ranks it first.
    let found = hybrid_search(
        &mut db,
        "owner zzqqx",
        8,
        Scope::All,
        Some(&unit(&[(0, 1.0)])),
    )
    .unwrap();
    assert_eq!(found.mode, "hybrid");
    assert_eq!(found.hits[0].seq, prose, "{:?}", found.hits);
    // With no vectors for the query the store says nothing is wrong: plain full-text.
    let fts = hybrid_search(&mut db, "owner", 8, Scope::All, None).unwrap();
    assert_eq!((fts.mode, fts.reason.as_deref()), ("fts", None));
}
