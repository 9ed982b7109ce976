//! Hybrid search: full-text (BM25) and embeddings (cosine), one hit per message. Messages that
//! match the query exactly (every identifier a short lookup names, else every term) come first,
//! in full-text order; the rest are fused by reciprocal rank, so vectors add the hits
//! that say the same in other words after them. Messages without vectors still come through the
//! full-text side.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::search::{
    check_limit, fts_candidates, hit_for, query_words, snippet, text_or_none, Hit, Scope,
};
use super::sql::{Sql, SqlValue};
use super::vectors::{coverage, rank, Coverage};
use crate::error::Result;

/// The usual RRF constant: ranks far down either list still count, a little.
const RRF_K: f64 = 60.0;
/// Full-text candidates considered for fusion.
const FTS_DEPTH: usize = 200;
/// A message no full-text term matched enters the fusion only this close to the query (cosine).
/// MiniLM puts unrelated texts at 0.0–0.28 (nonsense queries against a real session) and the
/// text an agent's own words describe at a median of 0.38: below this a vector-only hit is noise.
const MIN_VECTOR_ONLY_COSINE: f64 = 0.3;
/// Scores of exact matches start here, above any fused score (at most 2 / (RRF_K + 1)).
const EXACT_SCORE: f64 = 1.0;

/// Search hits and how they were found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Found {
    /// Best first.
    pub hits: Vec<Hit>,
    /// `fts` or `hybrid`.
    pub mode: &'static str,
    /// How much of the store has vectors.
    pub coverage: Coverage,
    /// Why embeddings were not used, when they could have been (`None` for hybrid, or when
    /// the store has none).
    pub reason: Option<String>,
}

impl Found {
    /// How the hits were ranked, for the tool's answer.
    pub fn how(&self) -> String {
        let pct = (100 * self.coverage.embedded)
            .checked_div(self.coverage.chunks)
            .unwrap_or(0);
        match (self.mode, &self.reason) {
            ("hybrid", _) => format!(
                "hybrid: exact matches first, then full-text + embeddings, which cover {pct}% of the stored text"
            ),
            (_, Some(why)) if self.coverage.embedded > 0 => {
                format!("full-text, {why}; embeddings cover {pct}% of the stored text")
            }
            (_, Some(why)) => format!("full-text, {why}"),
            _ if self.coverage.embedded > 0 => {
                format!("full-text; embeddings cover {pct}% of the stored text")
            }
            _ => "full-text".to_string(),
        }
    }
}

/// Searches with full text and, when `query_vec` is given and vectors exist, embeddings: exact
/// matches first in full-text order, then the other full-text hits and the vector neighbours
/// fused by reciprocal rank.
pub fn hybrid_search<S: Sql + ?Sized>(
    db: &mut S,
    query: &str,
    limit: usize,
    scope: Scope,
    query_vec: Option<&[f32]>,
) -> Result<Found> {
    check_limit(limit)?;
    let cov = coverage(db)?;
    let Some(qv) = query_vec.filter(|_| cov.embedded > 0) else {
        let hits = super::search::search(db, query, limit, scope)?;
        let reason = (query_vec.is_some() && cov.chunks > 0)
            .then(|| "no stored text has embeddings yet".to_string());
        return Ok(Found {
            hits,
            mode: "fts",
            coverage: cov,
            reason,
        });
    };
    let words = query_words(query);
    // Exact matches, best first (a message's best exact row), and the best hit of each other
    // message in full-text rank order.
    let mut exact: Vec<Hit> = Vec::new();
    let mut exact_seqs: HashSet<i64> = HashSet::new();
    let mut fts_rank: HashMap<i64, (usize, Hit)> = HashMap::new();
    let mut order = 0;
    for c in fts_candidates(db, query, scope)?
        .into_iter()
        .take(FTS_DEPTH)
    {
        let Some(hit) = hit_for(db, c.is_line, c.id, c.score, &words)? else {
            continue;
        };
        if c.exact {
            if exact_seqs.insert(hit.seq) {
                exact.push(hit);
            }
        } else if let std::collections::hash_map::Entry::Vacant(slot) = fts_rank.entry(hit.seq) {
            slot.insert((order, hit));
            order += 1;
        }
    }
    fts_rank.retain(|seq, _| !exact_seqs.contains(seq));
    let vec_rank: Vec<(i64, i64, f64)> = rank(db, qv, scope == Scope::Trimmed)?
        .into_iter()
        .filter(|(seq, _, cos)| {
            !exact_seqs.contains(seq)
                && (fts_rank.contains_key(seq) || *cos >= MIN_VECTOR_ONLY_COSINE)
        })
        .collect();
    let mut fused: HashMap<i64, f64> = HashMap::new();
    for (seq, (r, _)) in &fts_rank {
        *fused.entry(*seq).or_default() += 1.0 / (RRF_K + *r as f64 + 1.0);
    }
    for (r, (seq, _, _)) in vec_rank.iter().enumerate() {
        *fused.entry(*seq).or_default() += 1.0 / (RRF_K + r as f64 + 1.0);
    }
    let mut best: Vec<(i64, f64)> = fused.into_iter().collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    exact.truncate(limit);
    best.truncate(limit - exact.len());
    let start_line: HashMap<i64, i64> = vec_rank.iter().map(|(s, l, _)| (*s, *l)).collect();
    let mut hits: Vec<Hit> = exact
        .into_iter()
        .enumerate()
        .map(|(r, h)| Hit {
            score: EXACT_SCORE + 1.0 / (RRF_K + r as f64 + 1.0),
            ..h
        })
        .collect();
    for (seq, score) in best {
        let hit = match fts_rank.remove(&seq) {
            Some((_, hit)) => Some(hit),
            None => vector_hit(db, seq, start_line.get(&seq).copied().unwrap_or(1), &words)?,
        };
        hits.extend(hit.map(|h| Hit { score, ..h }));
    }
    Ok(Found {
        hits,
        mode: "hybrid",
        coverage: cov,
        reason: None,
    })
}

/// A hit found by its vector alone: the message, with the chunk's start line for outputs.
fn vector_hit<S: Sql + ?Sized>(
    db: &mut S,
    seq: i64,
    start_line: i64,
    words: &[String],
) -> Result<Option<Hit>> {
    let r = db.query(
        "SELECT m.role, m.tool_name, m.text, m.in_context, (SELECT id FROM blobs WHERE seq = m.seq LIMIT 1) FROM messages m WHERE m.seq = ?",
        &[SqlValue::Int(seq)],
    )?;
    Ok(r.into_iter().next().map(|r| {
        let text = r[2].as_text();
        let from_line: String = text
            .lines()
            .skip(start_line.max(1) as usize - 1)
            .collect::<Vec<_>>()
            .join("\n");
        let is_output = r[0].as_text() == "tool" || r[4] != SqlValue::Null;
        Hit {
            seq,
            role: r[0].as_text(),
            tool_name: text_or_none(&r[1]),
            snippet: snippet(&from_line, words),
            blob_id: text_or_none(&r[4]),
            line: is_output.then_some(start_line),
            in_context: r[3].as_i64() != 0,
            score: 0.0,
        }
    }))
}
