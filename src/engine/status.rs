//! What the engine tells the host: per-request stats and the session status.

use serde::Serialize;

use super::Engine;
use crate::facts::Regret;
use crate::store::{Store, StoreCounts, Usage};

/// What happened to one request.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stats {
    /// Estimated tokens as received.
    pub before_tokens: u64,
    /// Estimated tokens as sent.
    pub after_tokens: u64,
    /// A new cut was made on this request.
    pub trimmed: bool,
    /// Tool results (or runaway assistant texts) compressed on this request, at first sight.
    pub compressed: usize,
    /// The request went out unchanged because of an error (always false from the engine; the
    /// host sets it when it falls back).
    pub fail_open: bool,
    /// Messages received.
    pub messages_before: usize,
    /// Messages sent.
    pub messages_after: usize,
    /// Threshold in force for this model.
    pub trim_at: u32,
    /// The model's context window the threshold was taken from (0: not known).
    pub context_window: u32,
    /// Over the threshold: what must stay (system, task turn, last user turn, the last tool
    /// exchanges) is larger, and a further trim would not reach it or free 10% of it.
    pub over_limit: bool,
    /// The request starts with the previous rewritten request byte for byte.
    pub prefix_reused: bool,
    /// Number of the cut in force (0: none).
    pub cut: u32,
    /// Messages the cut in force keeps out of the request.
    pub removed_messages: usize,
    /// Estimated tokens of the digest after the pointer of the cut in force (0: none).
    pub digest_tokens: u64,
    /// Kept messages the cut in force sends with a tool result superseded by a later one.
    pub superseded_messages: usize,
    /// Estimated tokens supersession saves under the cut in force.
    pub superseded_tokens: u64,
    /// The new cut was made early because the prompt cache had gone cold (an idle gap longer
    /// than its lifetime), so it cost no cache hit.
    pub cache_cold: bool,
    /// Configuration values that were invalid and replaced by defaults.
    pub warnings: Vec<String>,
    /// A restore this request made: the cuts lifted, what came back, the cache write.
    pub restored: Option<super::Restored>,
    /// One line for the user when this request made a new cut and `notify` is on (the host shows
    /// it in its UI; the model never sees it).
    pub notice: Option<String>,
}

/// The notice of a new cut: what left the request, what the request weighs now, how to get it
/// back.
pub(super) fn cut_notice(
    removed_messages: usize,
    before: u64,
    after: u64,
    compressed: usize,
    cache_cold: bool,
) -> String {
    let k = |t: u64| format!("{:.1}k", t as f64 / 1000.0);
    let outputs = match compressed {
        0 => String::new(),
        1 => ", 1 large output compressed".to_string(),
        n => format!(", {n} large outputs compressed"),
    };
    let cold = if cache_cold {
        " (the prompt cache had expired, so this cut cost no cache hit)"
    } else {
        ""
    };
    format!(
        "smarter-compact: {removed_messages} older messages trimmed{cold}, request ≈{} → {} tokens{outputs}; \
         all of it stays searchable (smart_compact_search); /smarter-compact:restore brings it back",
        k(before),
        k(after)
    )
}

/// The last trim, for status.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LastTrim {
    /// Its number.
    pub seq: u32,
    /// Messages it removed.
    pub removed_messages: usize,
    /// Estimated tokens it removed.
    pub removed_tokens: u64,
    /// Asked for by the user.
    pub manual: bool,
    /// Made early, when the prompt cache had gone cold.
    pub cache_cold: bool,
    /// Lifted by a restore.
    pub lifted: bool,
    /// Kept messages it sends with a tool result superseded by a later one.
    pub superseded_messages: usize,
    /// Estimated tokens supersession saves under it.
    pub superseded_tokens: u64,
}

/// The state of a session, for `context_status`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Status {
    /// Version of this engine (the writer version of new rows).
    pub version: &'static str,
    /// One threshold for all models, when set.
    pub trim_at_override: Option<u32>,
    /// Per-model thresholds (tokens, or a share of the window like `"60%"`).
    pub trim_at_table: Vec<(String, crate::config::TrimAt)>,
    /// The share of the window a built-in threshold is capped at.
    pub trim_at_fraction: f64,
    /// In-flight trim target as a fraction of the threshold.
    pub trim_to_fraction: f64,
    /// Compression threshold.
    pub compress_over_tokens: u32,
    /// Recall on trim.
    pub compaction_recall: bool,
    /// Never compressed or trimmed from the in-flight turn.
    pub protected_tools: Vec<String>,
    /// The memory bank in use.
    pub memory_bank: Option<String>,
    /// Invalid configuration values (defaults used).
    pub warnings: Vec<String>,
    /// Messages stored.
    pub messages: usize,
    /// Trims made.
    pub trims: usize,
    /// Trims made early because the prompt cache had gone cold.
    pub cache_cold_trims: usize,
    /// Trims lifted by a restore.
    pub lifted_trims: usize,
    /// The last trim.
    pub last_trim: Option<LastTrim>,
    /// A manual trim is waiting for the next request.
    pub manual_pending: bool,
    /// Restores asked for and not yet made.
    pub restores_pending: u32,
    /// After a restore, automatic trims wait until the request reaches this many tokens.
    pub hold_below: Option<u64>,
    /// Totals over the requests.
    pub usage: Usage,
    /// Fail-opens, including those the store could not record.
    pub fail_opens: u64,
    /// What the store holds (absent when it cannot be read).
    pub stored: Option<StoreCounts>,
    /// Trim regret over the session: recalls of what a cut removed, calls made again.
    pub regret: Regret,
}

impl<S: Store> Engine<S> {
    /// The session status.
    pub fn status(&mut self) -> Status {
        let stored = self.store.counts().ok();
        let c = &self.config;
        Status {
            version: env!("CARGO_PKG_VERSION"),
            trim_at_override: c.trim_at_override,
            trim_at_table: c.trim_at_table.clone(),
            trim_at_fraction: c.trim_at_fraction,
            trim_to_fraction: c.trim_to_fraction,
            compress_over_tokens: c.compress_over_tokens,
            compaction_recall: c.compaction_recall,
            protected_tools: c.protected_tools.clone(),
            memory_bank: c.memory_bank.clone(),
            warnings: c.warnings.clone(),
            messages: self.known.len(),
            trims: self.cuts.len(),
            cache_cold_trims: self.cuts.iter().filter(|c| c.cache_cold).count(),
            lifted_trims: self.cuts.iter().filter(|c| c.lifted.is_some()).count(),
            last_trim: self.cuts.last().map(|t| LastTrim {
                seq: t.seq,
                removed_messages: t.removed_messages,
                removed_tokens: t.removed_tokens,
                manual: t.manual,
                cache_cold: t.cache_cold,
                lifted: t.lifted.is_some(),
                superseded_messages: t.superseded_messages(),
                superseded_tokens: t.superseded_tokens(),
            }),
            manual_pending: self.manual_pending,
            restores_pending: self.store.restores_pending().unwrap_or(0),
            hold_below: self
                .cuts
                .last()
                .and_then(|c| c.lifted.as_ref())
                .map(|l| l.hold_below),
            usage: self.usage.clone(),
            fail_opens: self.usage.fail_opens + self.unrecorded_fail_opens,
            stored,
            regret: self.known.values().fold(Regret::default(), |mut t, m| {
                t.add(m.regret);
                t
            }),
        }
    }
}
