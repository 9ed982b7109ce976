//! Embedding vectors in the session store. At ingest every message gets up to [`MAX_CHUNKS`]
//! chunks of its text (line-aligned, about [`CHUNK_BYTES`] each: the embedder reads 256 tokens);
//! each chunk's vector is cached by the chunk's content hash, so identical text is embedded once.
//! The host's embedder fills the vectors in the background (`pending` → `put`); search and
//! scoring use whatever exists and say how much that is.

use serde::Serialize;

use super::sql::{Sql, SqlValue};
use crate::compress::lines;
use crate::error::{Error, Result};
use crate::fingerprint::content_id;

/// Dimensions of a vector (all-MiniLM-L6-v2).
pub const DIM: usize = 384;
/// Chunk size in bytes (about 250 tokens of prose, fewer of code).
pub const CHUNK_BYTES: usize = 1_000;
/// Chunks kept per message: the first ones and the last one.
pub const MAX_CHUNKS: usize = 3;

/// One chunk of a message's text to embed.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// 1-based line of the message text where the chunk starts.
    pub start_line: usize,
    /// The chunk's text.
    pub text: String,
}

/// The chunks of a text: line-aligned pieces of at most [`CHUNK_BYTES`] (a longer line is cut at
/// a character boundary), the first `MAX_CHUNKS - 1` and the last.
pub fn chunks(text: &str) -> Vec<Chunk> {
    let mut all: Vec<Chunk> = Vec::new();
    let mut cur = String::new();
    let mut start = 1;
    for (i, line) in lines(text).into_iter().enumerate() {
        if !cur.is_empty() && cur.len() + line.len() + 1 > CHUNK_BYTES {
            all.push(Chunk {
                start_line: start,
                text: std::mem::take(&mut cur),
            });
            start = i + 1;
        }
        if cur.is_empty() {
            start = i + 1;
        } else {
            cur.push('\n');
        }
        let mut end = line.len().min(CHUNK_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        cur.push_str(&line[..end]);
    }
    if !cur.trim().is_empty() {
        all.push(Chunk {
            start_line: start,
            text: cur,
        });
    }
    all.retain(|c| !c.text.trim().is_empty());
    if all.len() > MAX_CHUNKS {
        let last = all.pop();
        all.truncate(MAX_CHUNKS - 1);
        all.extend(last);
    }
    all
}

/// Records the chunks of a stored message; their vectors become pending.
pub fn add_chunks<S: Sql + ?Sized>(db: &mut S, seq: i64, text: &str) -> Result<()> {
    for (k, c) in chunks(text).into_iter().enumerate() {
        let hash = content_id(&c.text);
        db.exec(
            "INSERT OR IGNORE INTO chunks(seq, chunk, start_line, hash) VALUES (?,?,?,?)",
            &[
                SqlValue::Int(seq),
                SqlValue::Int(k as i64),
                SqlValue::Int(c.start_line as i64),
                hash.as_str().into(),
            ],
        )?;
        db.exec(
            "INSERT OR IGNORE INTO vectors(hash, text) VALUES (?,?)",
            &[hash.as_str().into(), c.text.into()],
        )?;
    }
    Ok(())
}

/// A chunk waiting for its vector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pending {
    /// Content hash of the chunk.
    pub hash: String,
    /// Its text.
    pub text: String,
}

/// Up to `limit` chunks without a vector, oldest message first.
pub fn pending<S: Sql + ?Sized>(db: &mut S, limit: usize) -> Result<Vec<Pending>> {
    Ok(db
        .query("SELECT hash, text FROM vectors WHERE vec IS NULL ORDER BY rowid LIMIT CAST(? AS INTEGER)", &[SqlValue::Int(limit as i64)])?
        .into_iter()
        .map(|r| Pending { hash: r[0].as_text(), text: r[1].as_text() })
        .collect())
}

/// Stores the vector of a chunk (the text is dropped: the message keeps it).
pub fn put<S: Sql + ?Sized>(db: &mut S, hash: &str, model: &str, vec: &[f32]) -> Result<()> {
    if vec.len() != DIM || vec.iter().any(|x| !x.is_finite()) {
        return Err(Error::InvalidArgument(format!(
            "a vector must be {DIM} finite numbers"
        )));
    }
    db.exec(
        "UPDATE vectors SET vec = ?, model = ?, text = NULL WHERE hash = ?",
        &[SqlValue::Blob(to_bytes(vec)), model.into(), hash.into()],
    )
}

/// How many chunks have vectors, of how many.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Coverage {
    /// Chunks with a vector.
    pub embedded: u64,
    /// All chunks.
    pub chunks: u64,
}

/// The embedding coverage of the store.
pub fn coverage<S: Sql + ?Sized>(db: &mut S) -> Result<Coverage> {
    let r = db.query(
        "SELECT count(*), coalesce(sum(v.vec IS NOT NULL), 0) FROM chunks c JOIN vectors v ON v.hash = c.hash",
        &[],
    )?;
    let n = |i: usize| r.first().map_or(0, |r| r[i].as_i64().max(0) as u64);
    Ok(Coverage {
        chunks: n(0),
        embedded: n(1),
    })
}

/// Little-endian f32 bytes.
pub fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A vector from little-endian f32 bytes (`None` unless exactly [`DIM`] values).
pub fn from_bytes(b: &[u8]) -> Option<Vec<f32>> {
    (b.len() == DIM * 4).then(|| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// Cosine of two vectors (dot product: they are L2-normalised).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// Messages ranked by their best chunk's cosine to `query`: (seq, start line of that chunk,
/// cosine), best first. `trimmed` limits it to what the model cannot see.
pub fn rank<S: Sql + ?Sized>(
    db: &mut S,
    query: &[f32],
    trimmed: bool,
) -> Result<Vec<(i64, i64, f64)>> {
    let sql = format!(
        "SELECT c.seq, c.start_line, v.vec FROM chunks c JOIN vectors v ON v.hash = c.hash JOIN messages m ON m.seq = c.seq \
         WHERE v.vec IS NOT NULL{}",
        if trimmed { " AND (m.in_context = 0 OR EXISTS (SELECT 1 FROM blobs b WHERE b.seq = m.seq))" } else { "" }
    );
    let mut best: std::collections::HashMap<i64, (i64, f64)> = std::collections::HashMap::new();
    for r in db.query(&sql, &[])? {
        let Some(v) = from_bytes(r[2].as_bytes()) else {
            continue;
        };
        let cos = cosine(query, &v);
        let e = best
            .entry(r[0].as_i64())
            .or_insert((r[1].as_i64(), f64::MIN));
        if cos > e.1 {
            *e = (r[1].as_i64(), cos);
        }
    }
    let mut out: Vec<(i64, i64, f64)> = best
        .into_iter()
        .map(|(seq, (line, cos))| (seq, line, cos))
        .collect();
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_line_aligned_and_capped() {
        assert!(chunks("").is_empty());
        assert_eq!(
            chunks("one\ntwo"),
            vec![Chunk {
                start_line: 1,
                text: "one\ntwo".into()
            }]
        );
        let text: String = (1..=500)
            .map(|i| format!("line {i} of a long tool output\n"))
            .collect();
        let c = chunks(&text);
        assert_eq!(c.len(), MAX_CHUNKS);
        assert_eq!(c[0].start_line, 1);
        assert!(c[0].text.starts_with("line 1 of") && c[0].text.len() <= CHUNK_BYTES);
        assert!(c
            .last()
            .unwrap()
            .text
            .ends_with("line 500 of a long tool output"));
        let long = "é".repeat(3000);
        assert!(chunks(&long)[0].text.len() <= CHUNK_BYTES);
    }

    #[test]
    fn vector_bytes_round_trip() {
        let v: Vec<f32> = (0..DIM).map(|i| i as f32 / 1000.0).collect();
        assert_eq!(from_bytes(&to_bytes(&v)), Some(v));
        assert_eq!(from_bytes(&[0u8; 12]), None);
    }
}
