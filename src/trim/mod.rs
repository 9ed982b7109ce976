//! The cut: which messages leave the request when it reaches the threshold.
//!
//! A cut is planned once, from the whole history at that moment, and then re-applied to every
//! later request whose history still starts with the same messages; that is what keeps the
//! rewritten prefix byte-identical between trims.

mod pointer;
mod supersede;
mod units;

use serde::{Deserialize, Serialize};

use crate::facts::MsgInfo;
use crate::fingerprint::Fp;
use crate::message::Role;
use crate::tokens::estimate_text;

pub use pointer::{approx_tokens, pointer_text, POINTER_PREFIX};
pub use supersede::{file_read, supersede, Seen, Superseded, SUPERSEDED_PREFIX};
pub use units::{group, Unit, Units};

/// A planned cut over the first `covered` messages of a history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    /// 1 for the session's first trim, then 2, 3, ….
    pub seq: u32,
    /// How many messages the cut was planned over.
    pub covered: usize,
    /// Chained fingerprint of message `covered - 1`: the cut applies to a history exactly when
    /// its message at that index has this fingerprint.
    pub anchor: Fp,
    /// Kept message indices, as half-open ranges within `0..covered`.
    pub kept: Vec<(usize, usize)>,
    /// The message that carries the pointer.
    pub pointer_at: Option<usize>,
    /// The pointer text.
    pub pointer: String,
    /// Kept assistant messages whose signed thinking is removed.
    pub strip_thinking: Vec<usize>,
    /// Messages removed.
    pub removed_messages: usize,
    /// Estimated tokens removed.
    pub removed_tokens: u64,
    /// A manual trim (`/smarter-compact:compact`).
    pub manual: bool,
    /// Made early, right after an idle gap longer than the prompt cache's lifetime (the cache
    /// was cold, so the cut cost no cache hit).
    #[serde(default)]
    pub cache_cold: bool,
    /// Estimated tokens of the request before the first message this cut changes: the part of
    /// the prompt cache the cut leaves warm.
    #[serde(default)]
    pub stable_prefix_tokens: u64,
    /// Estimated tokens of the digest appended to the pointer (0: none).
    #[serde(default)]
    pub digest_tokens: u64,
    /// Kept tool results sent as a reference to a later result that supersedes them, decided
    /// when the cut was made (by message index, ascending).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<Superseded>,
    /// Set when the cut was lifted (`restore`): it no longer applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifted: Option<Lift>,
}

/// How a cut was lifted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lift {
    /// Automatic cuts wait until the request reaches this many estimated tokens.
    pub hold_below: u64,
    /// Estimated tokens the first request without the cut writes to the prompt cache again.
    pub cache_write_tokens: u64,
}

impl Cut {
    /// The message at `index` (< `covered`) is kept.
    pub fn keeps(&self, index: usize) -> bool {
        let at = self.kept.partition_point(|&(_, end)| end <= index);
        self.kept.get(at).is_some_and(|&(start, _)| start <= index)
    }

    /// Messages whose results are sent superseded.
    pub fn superseded_messages(&self) -> usize {
        let mut at: Vec<usize> = self.superseded.iter().map(|s| s.at).collect();
        at.dedup();
        at.len()
    }

    /// Estimated tokens supersession saves.
    pub fn superseded_tokens(&self) -> u64 {
        self.superseded.iter().map(|s| s.tokens).sum()
    }

    /// The cut applies to a history with these chained fingerprints (never once lifted).
    pub fn applies_to(&self, fps: &[Fp]) -> bool {
        self.lifted.is_none() && self.covered > 0 && fps.get(self.covered - 1) == Some(&self.anchor)
    }
}

/// What the planner needs besides the history.
#[derive(Debug, Clone)]
pub struct PlanParams {
    /// The threshold for this model.
    pub trim_at: u32,
    /// The in-flight turn is trimmed to this fraction of the threshold.
    pub trim_to_fraction: f64,
    /// Tool exchanges that always stay.
    pub keep_last_exchanges: usize,
    /// Tokens of the request outside the messages (system prompt, tools) if the host knows them.
    pub overhead_tokens: u32,
    /// Tokens kept free for the digest after the pointer.
    pub digest_tokens: u32,
}

/// A planned cut before it is numbered and anchored, with its size.
#[derive(Debug, Clone)]
pub struct Planned {
    /// For each message, whether it stays.
    pub keep: Vec<bool>,
    /// The message that carries the pointer.
    pub pointer_at: Option<usize>,
    /// The pointer text.
    pub pointer: String,
    /// Kept assistant messages to strip signed thinking from.
    pub strip_thinking: Vec<usize>,
    /// Messages removed.
    pub removed_messages: usize,
    /// Estimated tokens removed (as received).
    pub removed_tokens: u64,
    /// Estimated tokens of the request after the cut.
    pub after_tokens: u64,
    /// Estimated tokens before the first message the cut changes.
    pub stable_prefix_tokens: u64,
}

impl Planned {
    /// Numbers and anchors the plan over `fps`.
    pub fn into_cut(self, seq: u32, fps: &[Fp], manual: bool) -> Cut {
        let mut kept = Vec::new();
        let mut start = None;
        for (i, &k) in self.keep.iter().enumerate() {
            match (k, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    kept.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            kept.push((s, self.keep.len()));
        }
        Cut {
            seq,
            covered: self.keep.len(),
            anchor: fps[self.keep.len() - 1],
            kept,
            pointer_at: self.pointer_at,
            pointer: self.pointer,
            strip_thinking: self.strip_thinking,
            removed_messages: self.removed_messages,
            removed_tokens: self.removed_tokens,
            manual,
            cache_cold: false,
            stable_prefix_tokens: self.stable_prefix_tokens,
            digest_tokens: 0,
            superseded: Vec::new(),
            lifted: None,
        }
    }
}

/// Longest earlier user turn a cut keeps as it is, in estimated tokens (longer ones go to the
/// digest as head … tail).
pub const SMALL_USER_TURN_TOKENS: u64 = 300;
/// The earlier user turns a cut keeps take at most the threshold divided by this.
const KEPT_USER_TURNS_SHARE: u64 = 10;

/// Plans a cut of the whole history; `None` when nothing can leave.
pub fn plan(infos: &[&MsgInfo], p: &PlanParams) -> Option<Planned> {
    let n = infos.len();
    let Units { units, unit_of } = group(infos);
    let task = infos.iter().position(|m| m.real_user);
    let last_user = infos.iter().rposition(|m| m.real_user);
    let mut keep_unit = vec![false; units.len()];
    for (i, m) in infos.iter().enumerate() {
        if m.role == Role::System {
            keep_unit[unit_of[i]] = true;
        }
    }
    for i in task.into_iter().chain(last_user) {
        keep_unit[unit_of[i]] = true;
    }
    let in_flight_start = match last_user {
        Some(l) => {
            if let Some(reply) = infos[..l].iter().rposition(|m| m.role == Role::Assistant) {
                keep_unit[unit_of[reply]] = true;
            }
            l + 1
        }
        None => infos
            .iter()
            .position(|m| m.role != Role::System)
            .unwrap_or(n),
    };
    // The last few tool exchanges always stay, wherever they are.
    let exchanges: Vec<usize> = (0..units.len()).filter(|&u| units[u].exchange).collect();
    let last_exchanges = &exchanges[exchanges.len().saturating_sub(p.keep_last_exchanges)..];
    for &u in last_exchanges {
        keep_unit[u] = true;
    }
    // Head: what stays of the history before the in-flight turn.
    let in_flight: Vec<usize> = (0..units.len())
        .filter(|&u| units[u].first() >= in_flight_start)
        .collect();
    let head_tokens: u64 = (0..units.len())
        .filter(|&u| keep_unit[u] && units[u].first() < in_flight_start)
        .map(|u| units[u].tokens)
        .sum();
    let pointer_reserve = 80 + u64::from(p.digest_tokens);
    let trim_at = u64::from(p.trim_at);
    let fraction_budget = (p.trim_to_fraction * trim_at as f64) as u64;
    let room = trim_at.saturating_sub(head_tokens + u64::from(p.overhead_tokens) + pointer_reserve);
    let budget = fraction_budget.min(room);
    // The in-flight turn: its oldest units leave until it fits, but never one of the last
    // exchanges or anything after them, and never a protected tool's exchange.
    let protected_from = last_exchanges
        .first()
        .map_or(usize::MAX, |&u| units[u].first());
    let mut in_flight_tokens: u64 = in_flight.iter().map(|&u| units[u].tokens).sum();
    for &u in &in_flight {
        let unit = &units[u];
        let droppable = !keep_unit[u] && unit.first() < protected_from && !unit.protected;
        if droppable && in_flight_tokens > budget {
            in_flight_tokens -= unit.tokens;
        } else {
            keep_unit[u] = true;
        }
    }
    // Instructions first: the real user turns between the task turn and the last one stay as
    // they are when small, newest first, within a share of the threshold and the room the cut
    // leaves under it; the digest carries the ones that do not fit.
    let used = head_tokens + in_flight_tokens + u64::from(p.overhead_tokens) + pointer_reserve;
    let mut instructions_left = (trim_at / KEPT_USER_TURNS_SHARE).min(trim_at.saturating_sub(used));
    for i in (0..in_flight_start.min(n)).rev() {
        if !infos[i].real_user || Some(i) == task || Some(i) == last_user || keep_unit[unit_of[i]] {
            continue;
        }
        let t = u64::from(infos[i].sent_tokens);
        if t <= SMALL_USER_TURN_TOKENS && t <= instructions_left {
            instructions_left -= t;
            keep_unit[unit_of[i]] = true;
        }
    }
    let keep: Vec<bool> = (0..n).map(|i| keep_unit[unit_of[i]]).collect();
    let removed: Vec<usize> = (0..n).filter(|&i| !keep[i]).collect();
    if removed.is_empty() {
        return None;
    }
    let removed_tokens: u64 = removed.iter().map(|&i| u64::from(infos[i].tokens)).sum();
    let pointer = pointer_text(removed.len(), removed_tokens);
    let pointer_at = last_user.or_else(|| {
        (0..n).find(|&i| keep[i] && infos[i].role == Role::User && infos[i].results.is_empty())
    });
    let latest_assistant = infos.iter().rposition(|m| m.role == Role::Assistant);
    let strip_thinking: Vec<usize> = (0..n)
        .filter(|&i| keep[i] && infos[i].signed_thinking && Some(i) != latest_assistant)
        .collect();
    let kept_tokens: u64 = (0..n)
        .filter(|&i| keep[i])
        .map(|i| u64::from(infos[i].sent_tokens))
        .sum();
    let first_change = [removed.first(), pointer_at.as_ref(), strip_thinking.first()]
        .into_iter()
        .flatten()
        .min()
        .copied()
        .unwrap_or(n);
    let stable_prefix_tokens = infos[..first_change]
        .iter()
        .map(|m| u64::from(m.sent_tokens))
        .sum::<u64>()
        + u64::from(p.overhead_tokens);
    let pointer_tokens = if pointer_at.is_some() {
        u64::from(estimate_text(&pointer)) + 2
    } else {
        0
    };
    Some(Planned {
        keep,
        pointer_at,
        pointer,
        strip_thinking,
        removed_messages: removed.len(),
        removed_tokens,
        after_tokens: kept_tokens + pointer_tokens + u64::from(p.overhead_tokens),
        stable_prefix_tokens,
    })
}
