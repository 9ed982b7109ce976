//! `compact_context`: chitta's memory-aware scorer (seed 000), exactly.
//!
//! `score = structural × (0.3·recency + 0.4·sim(msg, query) + 0.3·(1 − coverage))` with
//! structural system 2.0 / user 1.0 / assistant 0.8 / tool 0.5, recency linear from 0.1 (oldest)
//! to 1.0 (newest), `sim` the cosine of the message and the query embeddings, `coverage` the
//! largest cosine of the message against its nearest 3 memories. Messages are kept greedily by
//! score until `target_ratio` of the original tokens (word count × 1.3) is filled; system
//! messages bypass the budget; survivors come back in their original order, verbatim. Without an
//! embedder `sim` and `coverage` are 0: recency and structure alone decide.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// Default fraction of tokens kept.
pub const DEFAULT_TARGET_RATIO: f64 = 0.4;
/// Accepted range of `target_ratio`.
pub const TARGET_RATIO_RANGE: (f64, f64) = (0.05, 1.0);

/// Most messages one call scores: a longer list is refused (E_ARG) rather than left to run for
/// minutes. With the model every message is embedded first, which is what costs: 2000 messages
/// took 195 s on a loaded 2-core machine, so 500 stay under an MCP client's 60 s timeout.
pub const MAX_MESSAGES: usize = 500;

/// E_ARG for a list longer than [`MAX_MESSAGES`], saying the limit.
pub fn check_count(messages: usize) -> Result<()> {
    if messages > MAX_MESSAGES {
        return Err(Error::InvalidArgument(format!(
            "compact_context takes at most {MAX_MESSAGES} messages, got {messages}: pass the most recent ones, or split the list"
        )));
    }
    Ok(())
}

/// What the embedder (if any) knows about each message.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// Cosine of each message against the query (0 without an embedder or a query).
    pub similarity: Option<Vec<f64>>,
    /// Largest cosine of each message against its nearest 3 memories (0 without a bank).
    pub coverage: Option<Vec<f64>>,
}

/// The statistics of a `compact_context` call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactStats {
    /// Tokens of all messages (word count × 1.3).
    pub before_tokens: u64,
    /// Tokens of the kept messages.
    pub after_tokens: u64,
    /// Messages dropped.
    pub dropped: usize,
    /// Tokens dropped, in percent of `before_tokens`, one decimal.
    pub dropped_pct: f64,
    /// Similarity and coverage came from embeddings.
    pub embedding: bool,
}

/// Which messages survive, in original order, with the stats and each message's score.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    /// Indices of the kept messages, ascending.
    pub kept: Vec<usize>,
    /// Score of every message (system messages: their structural weight, they always stay).
    pub scores: Vec<f64>,
    /// The stats.
    pub stats: CompactStats,
}

/// Role weight of the formula.
pub fn structural(role: &str) -> f64 {
    match role {
        "system" | "developer" => 2.0,
        "user" => 1.0,
        "assistant" => 0.8,
        _ => 0.5,
    }
}

/// Linear recency: 0.1 for the oldest message, 1.0 for the newest.
pub fn recency(index: usize, count: usize) -> f64 {
    if count <= 1 {
        1.0
    } else {
        0.1 + 0.9 * index as f64 / (count - 1) as f64
    }
}

/// The score of one message.
pub fn score(role: &str, recency: f64, similarity: f64, coverage: f64) -> f64 {
    structural(role) * (0.3 * recency + 0.4 * similarity + 0.3 * (1.0 - coverage))
}

/// The text of a `{role, content}` message: a string content, or the text of its blocks
/// (text, tool call arguments, tool results).
pub fn message_text(msg: &Value) -> String {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
            Value::Object(o) => {
                for key in ["text", "content", "thinking", "input", "arguments"] {
                    match o.get(key) {
                        Some(Value::String(s)) => out.push(s.clone()),
                        Some(v @ (Value::Array(_) | Value::Object(_))) if key != "input" => {
                            collect(v, out)
                        }
                        Some(v @ Value::Object(_)) => out.push(v.to_string()),
                        _ => {}
                    }
                }
                if let Some(Value::Array(calls)) = o.get("tool_calls") {
                    calls.iter().for_each(|c| collect(&c["function"], out));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(msg.get("content").unwrap_or(&Value::Null), &mut out);
    if let Some(Value::Array(calls)) = msg.get("tool_calls") {
        calls.iter().for_each(|c| collect(&c["function"], &mut out));
    }
    out.join("\n")
}

/// Tokens as the seed counts them: word count × 1.3, rounded up.
pub fn seed_tokens(text: &str) -> u64 {
    (text.split_whitespace().count() as f64 * 1.3).ceil() as u64
}

/// Runs the scorer over `{role, content}` messages.
pub fn compact_context(
    messages: &[Value],
    target_ratio: f64,
    signals: &Signals,
) -> Result<Compacted> {
    let (lo, hi) = TARGET_RATIO_RANGE;
    if !(lo..=hi).contains(&target_ratio) || target_ratio.is_nan() {
        return Err(Error::InvalidArgument(format!(
            "target_ratio must be between {lo} and {hi}, got {target_ratio}"
        )));
    }
    check_count(messages.len())?;
    let n = messages.len();
    let mut roles = Vec::with_capacity(n);
    for (i, m) in messages.iter().enumerate() {
        match m.get("role").and_then(Value::as_str) {
            Some(r) => roles.push(r),
            None => return Err(Error::malformed(i, "each message needs a string role")),
        }
    }
    for (name, v) in [
        ("similarity", &signals.similarity),
        ("coverage", &signals.coverage),
    ] {
        if v.as_ref().is_some_and(|v| v.len() != n) {
            return Err(Error::InvalidArgument(format!(
                "{name} must have one value per message"
            )));
        }
    }
    let tokens: Vec<u64> = messages
        .iter()
        .map(|m| seed_tokens(&message_text(m)))
        .collect();
    let before: u64 = tokens.iter().sum();
    let budget = target_ratio * before as f64;
    let at = |v: &Option<Vec<f64>>, i: usize| v.as_ref().map_or(0.0, |v| v[i]);
    let scores: Vec<f64> = (0..n)
        .map(|i| {
            if structural(roles[i]) == 2.0 {
                2.0
            } else {
                score(
                    roles[i],
                    recency(i, n),
                    at(&signals.similarity, i),
                    at(&signals.coverage, i),
                )
            }
        })
        .collect();
    let mut keep = vec![false; n];
    let mut order: Vec<usize> = Vec::new();
    for i in 0..n {
        if structural(roles[i]) == 2.0 {
            keep[i] = true; // system messages bypass the budget
        } else {
            order.push(i);
        }
    }
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(b.cmp(&a)));
    let mut used = 0.0;
    for i in order {
        if used + tokens[i] as f64 <= budget {
            used += tokens[i] as f64;
            keep[i] = true;
        }
    }
    let kept: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
    let after: u64 = kept.iter().map(|&i| tokens[i]).sum();
    let dropped_pct = if before == 0 {
        0.0
    } else {
        (1000.0 * (before - after) as f64 / before as f64).round() / 10.0
    };
    Ok(Compacted {
        kept,
        scores,
        stats: CompactStats {
            before_tokens: before,
            after_tokens: after,
            dropped: n - keep.iter().filter(|k| **k).count(),
            dropped_pct,
            embedding: signals.similarity.is_some() || signals.coverage.is_some(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn golden_case_by_hand() {
        // Four messages; the query similarity and coverage as an embedder would give them.
        let msgs = vec![
            json!({"role": "system", "content": "be brief"}),
            json!({"role": "user", "content": "one two three four five six seven eight nine ten"}),
            json!({"role": "assistant", "content": "alpha beta gamma delta"}),
            json!({"role": "tool", "content": "x y"}),
        ];
        let signals = Signals {
            similarity: Some(vec![0.0, 0.9, 0.2, 0.5]),
            coverage: Some(vec![0.0, 0.1, 0.8, 0.0]),
        };
        let c = compact_context(&msgs, 0.5, &signals).unwrap();
        // recency: 0.1, 0.4, 0.7, 1.0
        let user = 1.0 * (0.3 * 0.4 + 0.4 * 0.9 + 0.3 * 0.9);
        let asst = 0.8 * (0.3 * 0.7 + 0.4 * 0.2 + 0.3 * 0.2);
        let tool = 0.5 * (0.3 * 1.0 + 0.4 * 0.5 + 0.3 * 1.0);
        for (got, want) in c.scores[1..].iter().zip([user, asst, tool]) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
        // tokens: ceil(2×1.3)=3, 13, ceil(4×1.3)=6, ceil(2×1.3)=3 → 25; budget 12.5.
        // By score: user 0.75 (13, over budget), tool 0.4 (3, kept), assistant 0.28 (6, kept).
        assert_eq!(c.kept, vec![0, 2, 3]);
        assert_eq!(c.stats.before_tokens, 25);
        assert_eq!(c.stats.after_tokens, 12);
        assert_eq!(c.stats.dropped, 1);
        assert_eq!(c.stats.dropped_pct, 52.0);
        assert!(c.stats.embedding);
    }

    #[test]
    fn without_an_embedder_recency_and_structure_decide() {
        let msgs: Vec<Value> = (0..10).map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message number {i}")})).collect();
        let c = compact_context(&msgs, 0.4, &Signals::default()).unwrap();
        assert!(!c.stats.embedding);
        // 4 tokens each, budget 16: by structural × (0.3·recency + 0.3), the newest users first:
        // user 8 (0.57), user 6 (0.51), assistant 9 (0.48), user 4 (0.45) before assistant 7 (0.432).
        assert_eq!(c.kept, vec![4, 6, 8, 9]);
    }

    #[test]
    fn target_ratio_bounds_are_enforced() {
        for bad in [0.0, 0.04, 1.01, f64::NAN, -1.0] {
            let e = compact_context(&[], bad, &Signals::default()).unwrap_err();
            assert_eq!(e.code(), "E_ARG");
            assert!(e.to_string().contains("between 0.05 and 1"));
        }
        assert!(compact_context(&[], 0.05, &Signals::default()).is_ok());
        assert!(compact_context(&[], 1.0, &Signals::default()).is_ok());
    }
}
