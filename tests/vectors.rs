//! Vectors in the store, hybrid search and the memory bank, natively over rusqlite. The vectors
//! here are synthetic (one-hot); the real model's accuracy is tested in tests/js/embed.test.mjs.

mod common;

use common::native_sql::NativeSql;
use common::store_env::{sql_engine, temp_db};
use common::{load_sessions, replay, requests};
use smarter_compact::format::Format;
use smarter_compact::memory::bank::{episode_text, Bank};
use smarter_compact::memory::recall::Recall;
use smarter_compact::store::vectors::{coverage, pending, put, DIM};
use smarter_compact::store::{hybrid_search, scalar, Scope, Sql, SqlStore};

fn one_hot(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; DIM];
    v[i % DIM] = 1.0;
    v
}

#[test]
fn every_message_gets_chunks_and_vectors_fill_in_the_background() {
    let (_, history) = load_sessions()
        .into_iter()
        .find(|(id, _)| id == "django__django-11087")
        .unwrap();
    let path = temp_db("chunks");
    replay(
        &mut sql_engine(&path, 16_000),
        &requests(&history),
        Format::OpenAi,
    );
    let mut db = NativeSql::open(&path);
    let cov = coverage(&mut db).unwrap();
    assert!(
        cov.chunks >= history.len() as u64 - 5 && cov.embedded == 0,
        "{cov:?}"
    );
    let batch = pending(&mut db, 1_000).unwrap();
    let distinct = scalar(&mut db, "SELECT count(*) FROM vectors", &[])
        .unwrap()
        .as_i64();
    assert_eq!(
        batch.len() as i64,
        distinct,
        "identical chunks are embedded once"
    );
    for (i, p) in batch.iter().enumerate() {
        put(&mut db, &p.hash, "test", &one_hot(i)).unwrap();
    }
    assert_eq!(
        coverage(&mut db).unwrap().embedded,
        coverage(&mut db).unwrap().chunks
    );
    assert!(pending(&mut db, 10).unwrap().is_empty());
    assert_eq!(
        put(&mut db, &batch[0].hash, "test", &[1.0; 3])
            .unwrap_err()
            .code(),
        "E_ARG"
    );
}

#[test]
fn hybrid_finds_by_meaning_what_full_text_cannot() {
    let (_, history) = load_sessions()
        .into_iter()
        .find(|(id, _)| id == "django__django-11087")
        .unwrap();
    let path = temp_db("hybrid");
    replay(
        &mut sql_engine(&path, 16_000),
        &requests(&history),
        Format::OpenAi,
    );
    let mut db = NativeSql::open(&path);
    // Message 9's first chunk gets the vector the query will have.
    let target = scalar(
        &mut db,
        "SELECT hash FROM chunks WHERE seq = 9 AND chunk = 0",
        &[],
    )
    .unwrap()
    .as_text();
    for (i, p) in pending(&mut db, 10_000).unwrap().iter().enumerate() {
        put(
            &mut db,
            &p.hash,
            "test",
            &if p.hash == target {
                one_hot(0)
            } else {
                one_hot(i + 1)
            },
        )
        .unwrap();
    }
    let query = "zzqqx yyvvw";
    let fts = hybrid_search(&mut db, query, 5, Scope::All, None).unwrap();
    assert_eq!((fts.mode, fts.hits.len()), ("fts", 0));
    let hybrid = hybrid_search(&mut db, query, 5, Scope::All, Some(&one_hot(0))).unwrap();
    assert_eq!(hybrid.mode, "hybrid");
    assert_eq!(hybrid.hits[0].seq, 9, "the vector side found it");
    // Every other message is orthogonal to the query (cosine 0): no full-text match, too far to
    // be a hit.
    assert_eq!(hybrid.hits.len(), 1, "{:?}", hybrid.hits);
    assert_eq!(hybrid.coverage.embedded, hybrid.coverage.chunks);
}

#[test]
fn a_version_1_store_gets_its_chunks_on_upgrade() {
    let (_, history) = load_sessions().into_iter().next().unwrap();
    let path = temp_db("upgrade");
    replay(
        &mut sql_engine(&path, 16_000),
        &requests(&history),
        Format::OpenAi,
    );
    let chunks = {
        let mut db = NativeSql::open(&path);
        let n = scalar(&mut db, "SELECT count(*) FROM chunks", &[])
            .unwrap()
            .as_i64();
        for sql in [
            "DROP TABLE chunks",
            "DROP TABLE vectors",
            "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
        ] {
            db.exec(sql, &[]).unwrap();
        }
        n
    };
    let mut store = SqlStore::open(NativeSql::open(&path)).unwrap();
    assert_eq!(
        scalar(store.db(), "SELECT count(*) FROM chunks", &[])
            .unwrap()
            .as_i64(),
        chunks
    );
    assert_eq!(
        scalar(
            store.db(),
            "SELECT value FROM meta WHERE key = 'schema_version'",
            &[]
        )
        .unwrap()
        .as_i64(),
        2
    );
}

#[test]
fn bank_memories_coverage_recall_and_episodes() {
    let path = temp_db("bank");
    let mut bank = Bank::open(NativeSql::open(&path)).unwrap();
    assert!(bank.is_empty().unwrap());
    let id = bank
        .add(
            "note",
            "The flaky test_parser needs PYTHONHASHSEED pinned",
            "s1",
            1,
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        bank.add(
            "note",
            "The flaky test_parser needs PYTHONHASHSEED pinned",
            "s1",
            2
        )
        .unwrap(),
        None,
        "deduplicated"
    );
    bank.add("episode", &episode_text("s1", 48_200, 18_600, 94), "s1", 3)
        .unwrap();
    assert_eq!(
        episode_text("s1", 48_200, 18_600, 94),
        "Compaction of session s1: 48200→18600 tokens, 61% dropped (94 messages trimmed)."
    );
    assert_eq!(bank.len().unwrap(), 2);
    assert_eq!(bank.pending(10).unwrap().len(), 2);
    bank.put(id, &one_hot(5)).unwrap();
    let cov = bank.coverage(&[one_hot(5), one_hot(6)]).unwrap();
    assert!((cov[0] - 1.0).abs() < 1e-9 && cov[1].abs() < 1e-9);
    let recalled = bank.recall("why is test_parser flaky?", 5).unwrap();
    assert_eq!(
        recalled,
        vec!["The flaky test_parser needs PYTHONHASHSEED pinned".to_string()],
        "episodes are not recalled"
    );
    assert!(bank.recall("?? !!", 5).unwrap().is_empty());
    assert_eq!(
        bank.add("note", "   ", "s1", 4).unwrap_err().code(),
        "E_ARG"
    );
}
