//! The session store on SQLite, through the host's [`Sql`] capability.

use std::collections::HashMap;

use super::schema::{migrate, readable_version, SCHEMA_VERSION};
use super::search::index_terms;
use super::sql::{transaction, Sql, SqlValue};
use super::{Loaded, RequestRecord, RequestWrite, Store, StoreCounts, Usage};
use crate::compress::lines;
use crate::error::{Error, Result};
use crate::facts::{Blob, MsgInfo, NewMessage};
use crate::fingerprint::Fp;
use crate::trim::Cut;
use crate::VERSION;

/// A session store over one SQLite database.
pub struct SqlStore<S: Sql> {
    db: S,
    /// Opened with [`SqlStore::open_readonly`]: every write is refused with E_READONLY.
    read_only: bool,
    /// Schema version of the database as opened.
    version: i64,
}

impl<S: Sql> SqlStore<S> {
    /// Opens the store, creating or upgrading its schema.
    pub fn open(mut db: S) -> Result<Self> {
        migrate(&mut db)?;
        Ok(SqlStore {
            db,
            read_only: false,
            version: SCHEMA_VERSION,
        })
    }

    /// Opens an existing store to read it only: no schema is created, no migration runs, and
    /// every write ([`Store::commit`], [`SqlStore::db_for_write`]) fails with E_READONLY. A
    /// database without the session schema is E_NO_SESSION, one from a newer engine E_STORE; an
    /// older schema is read as it is.
    pub fn open_readonly(mut db: S) -> Result<Self> {
        let version = readable_version(&mut db)?;
        Ok(SqlStore {
            db,
            read_only: true,
            version,
        })
    }

    /// The schema version of the database (an older one only when opened read-only).
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// The database, for reading: search, get, the SQL tool.
    pub fn db(&mut self) -> &mut S {
        &mut self.db
    }

    /// The database, for a write; E_READONLY on a read-only store.
    pub fn db_for_write(&mut self) -> Result<&mut S> {
        self.writable("write")?;
        Ok(&mut self.db)
    }

    fn writable(&self, what: &str) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(format!(
                "cannot {what}: the session store was opened read-only"
            )));
        }
        Ok(())
    }
}

fn int(v: impl TryInto<i64>) -> SqlValue {
    SqlValue::Int(v.try_into().unwrap_or(i64::MAX))
}

fn opt(v: Option<&str>) -> SqlValue {
    SqlValue::from(v)
}

fn json_err(what: &str, e: serde_json::Error) -> Error {
    Error::Store(format!("unreadable {what} row: {e}"))
}

/// Most fingerprints one query of message texts or numbers binds (below SQLite's oldest limit of 999).
const TEXTS_PER_QUERY: usize = 256;

impl<S: Sql> Store for SqlStore<S> {
    fn load(&mut self) -> Result<Loaded> {
        let mut loaded = Loaded::default();
        for row in self
            .db
            .query("SELECT info FROM messages ORDER BY seq", &[])?
        {
            let info: MsgInfo =
                serde_json::from_str(&row[0].as_text()).map_err(|e| json_err("messages", e))?;
            loaded.messages.push(info);
        }
        for row in self.db.query("SELECT cut FROM trims ORDER BY id", &[])? {
            let cut: Cut =
                serde_json::from_str(&row[0].as_text()).map_err(|e| json_err("trims", e))?;
            loaded.cuts.push(cut);
        }
        let sums = self.db.query(
            "SELECT count(*), sum(before_tokens), sum(after_tokens), sum(prefix_reused), sum(compressed), sum(over_limit), sum(fail_open) FROM requests",
            &[],
        )?;
        if let Some(r) = sums.first() {
            let n = |i: usize| r[i].as_i64().max(0) as u64;
            loaded.usage = Usage {
                requests: n(0),
                before_tokens: n(1),
                after_tokens: n(2),
                prefix_reused: n(3),
                compressed: n(4),
                over_limit: n(5),
                fail_opens: n(6),
            };
        }
        let last = self.db.query(
            "SELECT model, at_ms, history_len, last_fp, cut_seq, before_tokens, after_tokens, trimmed, compressed, prefix_reused, over_limit \
             FROM requests WHERE fail_open = 0 ORDER BY id DESC LIMIT 1",
            &[],
        )?;
        loaded.last_request = last.first().map(|r| RequestRecord {
            model: r[0].as_text(),
            at_ms: r[1].as_i64().max(0) as u64,
            history_len: r[2].as_i64().max(0) as usize,
            last_fp: Fp::from_hex(&r[3].as_text()),
            cut_seq: r[4].as_i64().max(0) as u32,
            before_tokens: r[5].as_i64().max(0) as u64,
            after_tokens: r[6].as_i64().max(0) as u64,
            trimmed: r[7].as_i64() != 0,
            compressed: r[8].as_i64().max(0) as u32,
            prefix_reused: r[9].as_i64() != 0,
            over_limit: r[10].as_i64() != 0,
            fail_open: false,
        });
        Ok(loaded)
    }

    fn commit(&mut self, w: &RequestWrite) -> Result<()> {
        self.writable("record a request")?;
        let now = int(w.request.at_ms);
        transaction(&mut self.db, |db| {
            let blobs: HashMap<&str, &Blob> = w.blobs.iter().map(|b| (b.id.as_str(), b)).collect();
            for m in w.messages {
                insert_message(db, m, &blobs, &now)?;
            }
            if let Some((cut, removed)) = w.cut {
                let json = serde_json::to_string(cut).map_err(|e| Error::Store(e.to_string()))?;
                db.exec(
                    "INSERT INTO trims(seq, covered, removed_messages, removed_tokens, manual, created_at, writer, cut) VALUES (?,?,?,?,?,?,?,?)",
                    &[int(cut.seq), int(cut.covered), int(cut.removed_messages), int(cut.removed_tokens), int(cut.manual as i64), now.clone(), VERSION.into(), json.into()],
                )?;
                for fp in removed.iter() {
                    db.exec(
                        "UPDATE messages SET in_context = 0 WHERE fp = ?",
                        &[fp.to_hex().into()],
                    )?;
                }
            }
            for (cut, back) in w.lifted {
                let json = serde_json::to_string(cut).map_err(|e| Error::Store(e.to_string()))?;
                db.exec(
                    "UPDATE trims SET cut = ? WHERE seq = ?",
                    &[json.into(), int(cut.seq)],
                )?;
                for fp in back {
                    db.exec(
                        "UPDATE messages SET in_context = 1 WHERE fp = ?",
                        &[fp.to_hex().into()],
                    )?;
                }
            }
            if w.restores_served {
                db.exec("DELETE FROM meta WHERE key = 'restores_pending'", &[])?;
            }
            let r = w.request;
            db.exec(
                "INSERT INTO requests(at_ms, model, history_len, last_fp, cut_seq, before_tokens, after_tokens, trimmed, compressed, prefix_reused, over_limit, fail_open, writer) \
                 VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                &[now.clone(), r.model.as_str().into(), int(r.history_len), opt(r.last_fp.map(|f| f.to_hex()).as_deref()), int(r.cut_seq), int(r.before_tokens), int(r.after_tokens),
                  int(r.trimmed as i64), int(r.compressed), int(r.prefix_reused as i64), int(r.over_limit as i64), int(r.fail_open as i64), VERSION.into()],
            )
        })
    }

    fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn counts(&mut self) -> Result<StoreCounts> {
        let r = self.db.query(
            "SELECT count(*), coalesce(sum(in_context), 0), (SELECT count(*) FROM blobs) FROM messages",
            &[],
        )?;
        let n = |i: usize| r.first().map_or(0, |r| r[i].as_i64().max(0) as u64);
        let writers = self
            .db
            .query(
                "SELECT writer, count(*) FROM messages GROUP BY writer ORDER BY writer",
                &[],
            )?
            .into_iter()
            .map(|r| (r[0].as_text(), r[1].as_i64().max(0) as u64))
            .collect();
        Ok(StoreCounts {
            messages: n(0),
            in_context: n(1),
            blobs: n(2),
            writers,
        })
    }

    fn restores_pending(&mut self) -> Result<u32> {
        let rows = self.db.query(
            "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'restores_pending'",
            &[],
        )?;
        Ok(rows
            .first()
            .map_or(0, |r| u32::try_from(r[0].as_i64()).unwrap_or(0)))
    }

    fn request_restore(&mut self) -> Result<u32> {
        self.writable("ask for a restore")?;
        transaction(&mut self.db, |db| {
            db.exec(
                "INSERT INTO meta(key, value) VALUES ('restores_pending', '1') \
                 ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
                &[],
            )
        })?;
        self.restores_pending()
    }

    fn message_numbers(&mut self, fps: &[Fp]) -> Result<Vec<u64>> {
        let max = self
            .db
            .query("SELECT coalesce(max(seq), 0) FROM messages", &[])?
            .first()
            .map_or(0, |r| r[0].as_i64().max(0) as u64);
        let mut stored = std::collections::HashMap::with_capacity(fps.len());
        for batch in fps.chunks(TEXTS_PER_QUERY) {
            let marks = vec!["?"; batch.len()].join(",");
            let hex: Vec<SqlValue> = batch.iter().map(|fp| fp.to_hex().into()).collect();
            let sql = format!("SELECT fp, seq FROM messages WHERE fp IN ({marks})");
            for r in self.db.query(&sql, &hex)? {
                if let Some(fp) = Fp::from_hex(&r[0].as_text()) {
                    stored.insert(fp, r[1].as_i64().max(0) as u64);
                }
            }
        }
        Ok(super::number_messages(&stored, max, fps))
    }

    fn message_texts(&mut self, fps: &[Fp]) -> Result<Vec<Option<String>>> {
        let mut out = Vec::with_capacity(fps.len());
        for batch in fps.chunks(TEXTS_PER_QUERY) {
            let marks = vec!["?"; batch.len()].join(",");
            let hex: Vec<SqlValue> = batch.iter().map(|fp| fp.to_hex().into()).collect();
            let sql = format!("SELECT fp, json FROM messages WHERE fp IN ({marks})");
            let mut by_fp = std::collections::HashMap::with_capacity(batch.len());
            for r in self.db.query(&sql, &hex)? {
                if let Some(fp) = Fp::from_hex(&r[0].as_text()) {
                    by_fp.insert(fp, r[1].as_text());
                }
            }
            out.extend(batch.iter().map(|fp| by_fp.get(fp).cloned()));
        }
        Ok(out)
    }

    fn blob(&mut self, id: &str) -> Result<Option<Blob>> {
        let rows = self.db.query(
            "SELECT text, tool_name FROM blobs WHERE id = ?",
            &[id.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| Blob {
            id: id.to_string(),
            text: r[0].as_text(),
            tool_name: match &r[1] {
                SqlValue::Null => None,
                v => Some(v.as_text()),
            },
        }))
    }
}

/// Inserts one message once (by fingerprint) with its full-text rows, output lines and blobs.
fn insert_message<S: Sql>(
    db: &mut S,
    m: &NewMessage<'_>,
    blobs: &HashMap<&str, &Blob>,
    now: &SqlValue,
) -> Result<()> {
    let fp = m.info.fp.to_hex();
    if !db
        .query("SELECT 1 FROM messages WHERE fp = ?", &[fp.as_str().into()])?
        .is_empty()
    {
        return Ok(()); // already stored (another process, or a replay)
    }
    let info = serde_json::to_string(&m.info).map_err(|e| Error::Store(e.to_string()))?;
    let texts = m.texts()?;
    db.exec(
        "INSERT INTO messages(fp, role, tool_name, tool_call_id, text, tokens, in_context, turn, created_at, writer, json, info) VALUES (?,?,?,?,?,?,1,?,?,?,?,?)",
        &[fp.as_str().into(), m.info.role.as_str().into(), opt(m.tool_name.as_deref()), opt(m.tool_call_id.as_deref()), texts.text.as_str().into(),
          int(m.info.tokens), int(m.info.turn), now.clone(), VERSION.into(), m.json.into(), info.into()],
    )?;
    let seq = db
        .query(
            "SELECT seq FROM messages WHERE fp = ?",
            &[fp.as_str().into()],
        )?
        .first()
        .map(|r| r[0].as_i64())
        .ok_or_else(|| Error::Store("message row vanished after insert".into()))?;
    super::vectors::add_chunks(db, seq, &texts.text)?;
    if !texts.prose.trim().is_empty() {
        db.exec(
            "INSERT INTO messages_fts(docid, body, terms) VALUES (CAST(? AS INTEGER), ?, ?)",
            &[
                int(seq),
                texts.prose.as_str().into(),
                index_terms(&texts.prose).into(),
            ],
        )?;
    }
    for (o, text) in m.outputs.iter().zip(&texts.outputs) {
        for (k, line) in lines(text).into_iter().enumerate() {
            db.exec(
                "INSERT INTO output_lines(seq, tool_call_id, tool_name, blob_id, line_no, text) VALUES (?,?,?,?,?,?)",
                &[int(seq), o.call_id.as_str().into(), opt(o.tool_name.as_deref()), opt(o.blob_id.as_deref()), int(k + 1), line.into()],
            )?;
            if !line.trim().is_empty() {
                db.exec(
                    "INSERT INTO lines_fts(docid, body, terms) VALUES (last_insert_rowid(), ?, ?)",
                    &[line.into(), index_terms(line).into()],
                )?;
            }
        }
    }
    for c in &m.info.compressed {
        if let Some(b) = blobs.get(c.blob_id.as_str()) {
            db.exec(
                "INSERT OR IGNORE INTO blobs(id, seq, tool_name, lines, tokens, text, created_at, writer) VALUES (?,?,?,?,?,?,?,?)",
                &[b.id.as_str().into(), int(seq), opt(b.tool_name.as_deref()), int(lines(&b.text).len()), int(crate::tokens::estimate_text(&b.text)),
                  b.text.as_str().into(), now.clone(), VERSION.into()],
            )?;
        }
    }
    Ok(())
}
