//! The memory bank (`banks/<name>.db`): short memories with vectors, shared across sessions.
//! It answers three questions: how well is a turn already covered by memories
//! (`memory_coverage`, the largest cosine against the nearest memories), which memories matter
//! for a query (recall on trim, by full text so it runs synchronously on the request path), and
//! it records compaction episodes, distilled turns and what cuts teach it
//! ([`crate::memory::from_cut`]).

use crate::error::{Error, Result};
use crate::fingerprint::content_id;
use crate::memory::from_cut::file_subject;
use crate::memory::recall::{Memory, Recall};
use crate::store::vectors::{cosine, from_bytes, to_bytes, DIM};
use crate::store::{bm25, index_terms, match_expr, scalar, transaction, Sql, SqlValue};

/// Schema version of a bank.
const BANK_VERSION: i64 = 1;
/// Longest memory stored, in bytes.
pub const MAX_MEMORY_BYTES: usize = 2_000;

/// A memory bank over one SQLite database.
pub struct Bank<S: Sql> {
    db: S,
}

impl<S: Sql> Bank<S> {
    /// Opens the bank, creating its schema.
    pub fn open(mut db: S) -> Result<Self> {
        db.exec(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            &[],
        )?;
        let v = db
            .query("SELECT value FROM meta WHERE key = 'bank_version'", &[])?
            .first()
            .map_or(0, |r| r[0].as_i64());
        if v > BANK_VERSION {
            return Err(Error::Store(format!(
                "memory bank version {v} is newer than this engine's {BANK_VERSION}"
            )));
        }
        if v == 0 {
            transaction(&mut db, |db| {
                db.exec(
                    "CREATE TABLE memories (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, text TEXT NOT NULL, source TEXT, \
                     hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, writer TEXT NOT NULL, vec BLOB)",
                    &[],
                )?;
                db.exec(
                    "CREATE VIRTUAL TABLE memories_fts USING fts4(body, terms, content=\"\", tokenize=unicode61 \"tokenchars=_\")",
                    &[],
                )?;
                db.exec(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('bank_version', ?)",
                    &[BANK_VERSION.to_string().into()],
                )
            })?;
        }
        Ok(Bank { db })
    }

    /// Adds a memory (`kind`: episode, distilled, note, cut); `None` when the same text is already there.
    pub fn add(
        &mut self,
        kind: &str,
        text: &str,
        source: &str,
        now_ms: u64,
    ) -> Result<Option<i64>> {
        let mut end = text.len().min(MAX_MEMORY_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = text[..end].trim();
        if text.is_empty() {
            return Err(Error::InvalidArgument("a memory needs text".into()));
        }
        let hash = content_id(text);
        transaction(&mut self.db, |db| {
            if !db
                .query(
                    "SELECT 1 FROM memories WHERE hash = ?",
                    &[hash.as_str().into()],
                )?
                .is_empty()
            {
                return Ok(None);
            }
            db.exec(
                "INSERT INTO memories(kind, text, source, hash, created_at, writer) VALUES (?,?,?,?,?,?)",
                &[kind.into(), text.into(), source.into(), hash.as_str().into(), SqlValue::Int(now_ms as i64), crate::VERSION.into()],
            )?;
            let id = scalar(
                db,
                "SELECT id FROM memories WHERE hash = ?",
                &[hash.as_str().into()],
            )?
            .as_i64();
            db.exec(
                "INSERT INTO memories_fts(docid, body, terms) VALUES (CAST(? AS INTEGER), ?, ?)",
                &[SqlValue::Int(id), text.into(), index_terms(text).into()],
            )?;
            Ok(Some(id))
        })
    }

    /// Memories waiting for a vector: (id, text).
    pub fn pending(&mut self, limit: usize) -> Result<Vec<(i64, String)>> {
        Ok(self
            .db
            .query("SELECT id, text FROM memories WHERE vec IS NULL ORDER BY id LIMIT CAST(? AS INTEGER)", &[SqlValue::Int(limit as i64)])?
            .into_iter()
            .map(|r| (r[0].as_i64(), r[1].as_text()))
            .collect())
    }

    /// Stores a memory's vector.
    pub fn put(&mut self, id: i64, vec: &[f32]) -> Result<()> {
        if vec.len() != DIM || vec.iter().any(|x| !x.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "a vector must be {DIM} finite numbers"
            )));
        }
        self.db.exec(
            "UPDATE memories SET vec = ? WHERE id = ?",
            &[SqlValue::Blob(to_bytes(vec)), SqlValue::Int(id)],
        )
    }

    /// `memory_coverage` of each vector: the largest cosine against the memories (the best of
    /// the nearest three is the nearest one); 0 for an empty bank.
    pub fn coverage(&mut self, vecs: &[Vec<f32>]) -> Result<Vec<f64>> {
        let memories: Vec<Vec<f32>> = self
            .db
            .query("SELECT vec FROM memories WHERE vec IS NOT NULL", &[])?
            .into_iter()
            .filter_map(|r| from_bytes(r[0].as_bytes()))
            .collect();
        Ok(vecs
            .iter()
            .map(|v| memories.iter().map(|m| cosine(v, m)).fold(0.0, f64::max))
            .collect())
    }

    /// Memories in the bank.
    pub fn len(&mut self) -> Result<u64> {
        Ok(scalar(&mut self.db, "SELECT count(*) FROM memories", &[])?
            .as_i64()
            .max(0) as u64)
    }

    /// The bank holds no memory.
    pub fn is_empty(&mut self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// The memory recorded for a trim.
pub fn episode_text(session: &str, before: u64, after: u64, removed_messages: usize) -> String {
    let pct = (100 * before.saturating_sub(after) + before / 2)
        .checked_div(before)
        .unwrap_or(0);
    format!("Compaction of session {session}: {before}→{after} tokens, {pct}% dropped ({removed_messages} messages trimmed).")
}

impl<S: Sql> Bank<S> {
    /// The memories matching `query` by full text, best first, leaving out episodes and, when
    /// `session` is given, the memories whose source is that session (`<session>` or
    /// `<session> #N …`).
    fn search(&mut self, query: &str, limit: usize, session: Option<&str>) -> Result<Vec<String>> {
        let Some(expr) = match_expr(query) else {
            return Ok(Vec::new());
        };
        let mut sql = String::from(
            "SELECT m.text, matchinfo(memories_fts, 'pcnalx') FROM memories_fts JOIN memories m ON m.id = memories_fts.docid \
             WHERE memories_fts MATCH ? AND m.kind != 'episode'",
        );
        let mut params: Vec<SqlValue> = vec![expr.into()];
        if let Some(s) = session {
            let prefix = format!("{s} ");
            sql.push_str(
                " AND (m.source IS NULL OR (m.source != ? AND substr(m.source, 1, CAST(? AS INTEGER)) != ?))",
            );
            params.push(s.into());
            params.push(SqlValue::Int(prefix.chars().count() as i64));
            params.push(prefix.as_str().into());
        }
        sql.push_str(" LIMIT 2000");
        let rows = self.db.query(&sql, &params)?;
        let mut scored: Vec<(f64, String)> = rows
            .into_iter()
            .map(|r| (bm25(r[1].as_bytes(), &[1.0, 0.4]), r[0].as_text()))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        // One memory per file and task: a later cut that edited a file it had read wrote a
        // second memory of it; the best ranked one stands for both.
        let mut subjects = std::collections::HashSet::new();
        scored.retain(|(_, t)| file_subject(t).is_none_or(|s| subjects.insert(s.to_string())));
        Ok(scored.into_iter().take(limit).map(|(_, t)| t).collect())
    }
}

impl<S: Sql> Recall for Bank<S> {
    fn recall(&mut self, query: &str, limit: usize) -> Result<Vec<String>> {
        self.search(query, limit, None)
    }

    fn recall_elsewhere(
        &mut self,
        query: &str,
        limit: usize,
        session: &str,
    ) -> Result<Vec<String>> {
        self.search(query, limit, Some(session))
    }

    fn remember(&mut self, kind: &str, memories: &[Memory], now_ms: u64) -> Result<usize> {
        let mut added = 0;
        for m in memories {
            if self.add(kind, &m.text, &m.source, now_ms)?.is_some() {
                added += 1;
            }
        }
        Ok(added)
    }
}
