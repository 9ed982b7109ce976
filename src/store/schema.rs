//! The session database schema, versioned, with migrations. The SQL tool's description documents
//! these tables for the model ([`SCHEMA_DOC`]); keep the two in step.

use super::sql::{scalar, transaction, Sql, SqlValue};
use crate::error::{Error, Result};

/// Version this engine writes; a database with a higher version is left alone.
pub const SCHEMA_VERSION: i64 = 2;

/// The schema version that added embedding chunks and vectors.
pub const EMBEDDINGS_SINCE: i64 = 2;

/// Tokenizer of the full-text indexes: words split on punctuation, `_` kept inside identifiers.
const TOKENIZE: &str = "tokenize=unicode61 \"tokenchars=_\"";

/// Migration `n` brings the schema from version `n` to `n + 1`; statements separated by `;\n`.
fn migrations() -> Vec<String> {
    vec![format!(
        "CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  fp TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL,
  tool_name TEXT,
  tool_call_id TEXT,
  text TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  in_context INTEGER NOT NULL DEFAULT 1,
  turn INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  writer TEXT NOT NULL,
  json TEXT NOT NULL,
  info TEXT NOT NULL
);
CREATE TABLE blobs (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  tool_name TEXT,
  lines INTEGER NOT NULL,
  tokens INTEGER NOT NULL,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  writer TEXT NOT NULL
);
CREATE TABLE output_lines (
  id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  tool_call_id TEXT,
  tool_name TEXT,
  blob_id TEXT,
  line_no INTEGER NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX output_lines_seq ON output_lines(seq, line_no);
CREATE INDEX output_lines_blob ON output_lines(blob_id, line_no);
CREATE VIEW blob_lines AS SELECT blob_id, line_no, text, seq, tool_name FROM output_lines WHERE blob_id IS NOT NULL;
CREATE TABLE trims (
  id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  covered INTEGER NOT NULL,
  removed_messages INTEGER NOT NULL,
  removed_tokens INTEGER NOT NULL,
  manual INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  writer TEXT NOT NULL,
  cut TEXT NOT NULL
);
CREATE TABLE requests (
  id INTEGER PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  model TEXT NOT NULL,
  history_len INTEGER NOT NULL,
  last_fp TEXT,
  cut_seq INTEGER NOT NULL,
  before_tokens INTEGER NOT NULL,
  after_tokens INTEGER NOT NULL,
  trimmed INTEGER NOT NULL,
  compressed INTEGER NOT NULL,
  prefix_reused INTEGER NOT NULL,
  over_limit INTEGER NOT NULL,
  fail_open INTEGER NOT NULL,
  writer TEXT NOT NULL
);
CREATE VIRTUAL TABLE messages_fts USING fts4(body, terms, content=\"\", {TOKENIZE});
CREATE VIRTUAL TABLE lines_fts USING fts4(body, terms, content=\"\", {TOKENIZE})"
        ),
        // v2: embedding chunks and their vectors, cached by content hash.
        "CREATE TABLE chunks (
  seq INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (seq, chunk)
);
CREATE TABLE vectors (
  hash TEXT PRIMARY KEY,
  text TEXT,
  model TEXT,
  vec BLOB
)"
        .to_string(),
    ]
}

/// The schema version recorded in `meta` (0 when there is none yet).
fn recorded_version<S: Sql + ?Sized>(db: &mut S) -> Result<i64> {
    Ok(db
        .query("SELECT value FROM meta WHERE key = 'schema_version'", &[])?
        .into_iter()
        .next()
        .map_or(0, |r| r[0].as_i64()))
}

fn newer(version: i64) -> Error {
    Error::Store(format!(
        "the session database has schema version {version}, newer than this engine's {SCHEMA_VERSION}; upgrade smarter-compact"
    ))
}

/// The schema version of a database that is only to be read, found without creating or changing
/// anything: E_NO_SESSION when it holds no session schema (a new or foreign database), E_STORE
/// when a newer engine wrote it. An older version is returned as it is: its tables are read as
/// they are, and what they lack (embeddings before version 2) is reported as absent.
pub fn readable_version<S: Sql + ?Sized>(db: &mut S) -> Result<i64> {
    let has_meta = !db
        .query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            &[],
        )?
        .is_empty();
    let version = if has_meta { recorded_version(db)? } else { 0 };
    if version < 1 {
        return Err(Error::NoSession(
            "the database holds no session store (no schema version recorded)".into(),
        ));
    }
    if version > SCHEMA_VERSION {
        return Err(newer(version));
    }
    Ok(version)
}

/// Creates or upgrades the schema; refuses a database written by a newer version.
pub fn migrate<S: Sql + ?Sized>(db: &mut S) -> Result<()> {
    db.exec(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        &[],
    )?;
    let current = recorded_version(db)?;
    if current > SCHEMA_VERSION {
        return Err(newer(current));
    }
    let all = migrations();
    transaction(db, |db| {
        let again = scalar(db, "SELECT count(*) FROM meta WHERE key = 'schema_version' AND CAST(value AS INTEGER) >= ?", &[SqlValue::Int(SCHEMA_VERSION)])?;
        if again.as_i64() > 0 {
            return Ok(()); // another process migrated meanwhile
        }
        for step in &all[current as usize..] {
            for stmt in step.split(";\n") {
                db.exec(stmt, &[])?;
            }
        }
        if current == 1 {
            // Messages stored by v1 get their embedding chunks now.
            for r in db.query("SELECT seq, text FROM messages ORDER BY seq", &[])? {
                super::vectors::add_chunks(db, r[0].as_i64(), &r[1].as_text())?;
            }
        }
        db.exec(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
            &[SqlValue::Text(SCHEMA_VERSION.to_string())],
        )?;
        db.exec(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('created_by', ?)",
            &[SqlValue::Text(crate::VERSION.to_string())],
        )
    })
}

/// The schema as the SQL tool describes it to the model.
pub const SCHEMA_DOC: &str = "Read-only SQLite database of this session (one statement, SELECT/WITH only).
Tables:
- messages(seq INTEGER PRIMARY KEY -- arrival order, role TEXT -- system|user|assistant|tool, tool_name TEXT, tool_call_id TEXT, text TEXT -- full text (tool outputs uncompressed), tokens INTEGER -- estimate, in_context INTEGER -- 1 if still in the model's context, 0 if trimmed, turn INTEGER -- real user turns so far, created_at INTEGER -- ms since epoch, writer TEXT -- engine version, fp TEXT, json TEXT -- the message as sent by the host)
- output_lines(seq INTEGER -- messages.seq of the tool result, tool_call_id TEXT, tool_name TEXT, blob_id TEXT -- set when the output was compressed, line_no INTEGER -- 1-based, text TEXT) -- every line of every tool output
- blob_lines -- view: output_lines of compressed outputs (blob_id, line_no, text, seq, tool_name)
- blobs(id TEXT PRIMARY KEY, seq INTEGER, tool_name TEXT, lines INTEGER, tokens INTEGER, text TEXT -- full text of a compressed output)
- chunks(seq INTEGER, chunk INTEGER, start_line INTEGER, hash TEXT) and vectors(hash TEXT PRIMARY KEY, model TEXT, vec BLOB -- 384 little-endian float32) -- embeddings of message chunks
- trims(seq INTEGER -- trim number, covered INTEGER, removed_messages INTEGER, removed_tokens INTEGER, manual INTEGER, created_at INTEGER)
- requests(at_ms INTEGER, model TEXT, before_tokens INTEGER, after_tokens INTEGER, trimmed INTEGER, compressed INTEGER, prefix_reused INTEGER, over_limit INTEGER, fail_open INTEGER)
Examples: SELECT count(*) FROM output_lines WHERE text LIKE '%ERROR%';  SELECT seq, role, substr(text, 1, 200) FROM messages WHERE in_context = 0 ORDER BY seq DESC LIMIT 20;";
