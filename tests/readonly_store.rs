//! A store opened read-only, natively over rusqlite: it never creates a file, a schema or a row,
//! refuses every write with E_READONLY, reads a live writer's WAL, reads an older schema as it
//! is, and leaves the bytes of the database and of its `-wal` exactly as they were.

mod common;

use std::path::Path;

use common::native_sql::NativeSql;
use common::store_env::{sql_engine, temp_db};
use common::{load_sessions, opts, replay, requests};
use serde_json::Value;
use sha2::{Digest, Sha256};
use smarter_compact::config::Config;
use smarter_compact::format::Format;
use smarter_compact::store::{
    scalar, RequestRecord, RequestWrite, Scope, Sql, SqlStore, Store, SCHEMA_VERSION,
};
use smarter_compact::Engine;

/// SHA-256 of a file, or None when it does not exist.
fn sha256(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let digest = Sha256::digest(&bytes);
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

fn wal(path: &Path) -> std::path::PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    p.into()
}

fn history(id: &str) -> Vec<Value> {
    load_sessions()
        .into_iter()
        .find(|(i, _)| i == id)
        .expect("session")
        .1
}

fn reader(path: &Path) -> Engine<SqlStore<NativeSql>> {
    let store = SqlStore::open_readonly(NativeSql::open_readonly(path).expect("read-only open"))
        .expect("read-only store");
    Engine::open(
        store,
        Config::resolve(&Default::default(), None, &Value::Null),
    )
    .expect("engine")
}

#[test]
fn a_read_only_open_of_a_missing_file_is_an_error_and_creates_nothing() {
    let path = temp_db("missing");
    assert!(NativeSql::open_readonly(&path).is_err());
    assert!(
        !path.exists(),
        "a read-only open created {}",
        path.display()
    );
    assert!(!wal(&path).exists());
}

#[test]
fn a_database_without_the_session_schema_is_no_session_and_stays_as_it_was() {
    // An empty file (a store created but never written) and a foreign database.
    let empty = temp_db("empty");
    std::fs::write(&empty, b"").unwrap();
    let foreign = temp_db("foreign");
    NativeSql::open(&foreign)
        .exec("CREATE TABLE other (x INTEGER)", &[])
        .unwrap();
    for path in [empty, foreign] {
        let before = sha256(&path);
        let err = SqlStore::open_readonly(NativeSql::open_readonly(&path).unwrap())
            .err()
            .expect("refused");
        assert_eq!(err.code(), "E_NO_SESSION", "{err}");
        assert_eq!(sha256(&path), before, "{}", path.display());
        let mut db = NativeSql::open_readonly(&path).unwrap();
        let meta = scalar(
            &mut db,
            "SELECT count(*) FROM sqlite_master WHERE name = 'meta'",
            &[],
        );
        assert_eq!(meta.unwrap().as_i64(), 0, "no schema was created");
    }
}

#[test]
fn a_reader_sees_a_live_writers_wal_refuses_writes_and_changes_no_byte() {
    let hist = history("django__django-14034");
    let reqs = requests(&hist);
    let path = temp_db("live");
    // The writer stays open: its WAL holds what it wrote.
    let mut writer = sql_engine(&path, 8_000);
    replay(&mut writer, &reqs, Format::OpenAi);
    let written = writer.status();
    let wal_len = std::fs::metadata(wal(&path)).map_or(0, |m| m.len());
    assert!(wal_len > 0, "the writer's WAL is empty");
    let (db_sum, wal_sum) = (sha256(&path), sha256(&wal(&path)));

    let mut r = reader(&path);
    assert!(r.is_read_only());
    let s = r.status();
    assert_eq!(s.messages, written.messages);
    assert_eq!(s.trims, written.trims);
    assert_eq!(s.usage, written.usage);
    assert_eq!(s.stored, written.stored);
    let found = r.search("MultiValueField", 3, Scope::All, None).unwrap();
    assert!(!found.hits.is_empty());
    assert!(r.get("8", None, None, None).is_ok());
    assert!(r.pending_vectors(16).unwrap().is_empty());

    let body = serde_json::to_string(&reqs[0]).unwrap();
    let refused = r.transform(&body, &opts(Format::OpenAi)).err().unwrap();
    assert_eq!(refused.code(), "E_READONLY", "{refused}");
    let vector = r.put_vector("00", "m", &[0.5; 384]).err().unwrap();
    assert_eq!(vector.code(), "E_READONLY", "{vector}");
    r.record_fail_open("m", 1);
    assert_eq!(r.status().fail_opens, 1, "counted in memory only");
    let store = r.store_mut();
    let commit = store.commit(&RequestWrite::request_only(&RequestRecord::default()));
    assert_eq!(commit.err().unwrap().code(), "E_READONLY");
    assert_eq!(store.db_for_write().err().unwrap().code(), "E_READONLY");
    drop(r);

    assert_eq!(
        sha256(&path),
        db_sum,
        "the reader changed the database file"
    );
    assert_eq!(sha256(&wal(&path)), wal_sum, "the reader changed the WAL");
    assert_eq!(writer.status().usage, written.usage, "nothing was recorded");
}

#[test]
fn an_older_schema_is_read_as_it_is_and_a_newer_one_refused() {
    let hist = history("django__django-14034");
    let path = temp_db("v1");
    let mut writer = sql_engine(&path, 8_000);
    replay(&mut writer, &requests(&hist), Format::OpenAi);
    let written = writer.status();
    drop(writer);
    // The schema as version 1 left it: no embedding tables.
    let mut db = NativeSql::open(&path);
    for sql in [
        "DROP TABLE chunks",
        "DROP TABLE vectors",
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
    ] {
        db.exec(sql, &[]).unwrap();
    }
    drop(db);
    let before = sha256(&path);

    let mut r = reader(&path);
    assert_eq!(r.store_mut().schema_version(), 1);
    assert_eq!(r.status().messages, written.messages);
    assert_eq!(r.status().stored, written.stored);
    let found = r.search("MultiValueField", 3, Scope::All, None).unwrap();
    assert_eq!(found.mode, "fts");
    assert!(!found.hits.is_empty());
    assert!(r.pending_vectors(16).unwrap().is_empty());
    drop(r);
    assert_eq!(
        sha256(&path),
        before,
        "an older store was changed by a reader"
    );
    let mut db = NativeSql::open_readonly(&path).unwrap();
    let version = scalar(
        &mut db,
        "SELECT value FROM meta WHERE key = 'schema_version'",
        &[],
    );
    assert_eq!(version.unwrap().as_i64(), 1, "no migration ran");
    drop(db);

    NativeSql::open(&path)
        .exec(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'",
            &[(SCHEMA_VERSION + 1).to_string().into()],
        )
        .unwrap();
    let before = sha256(&path);
    let err = SqlStore::open_readonly(NativeSql::open_readonly(&path).unwrap())
        .err()
        .expect("newer schema refused");
    assert_eq!(err.code(), "E_STORE");
    assert_eq!(sha256(&path), before);
}
