//! Deciding, when a cut is made, which kept tool results later ones supersede
//! ([`crate::trim::supersede`]); the decision is frozen in the cut.

use std::collections::HashSet;

use crate::config::Config;
use crate::facts::{MsgInfo, Part};
use crate::message::{Message, Role};
use crate::trim::{supersede, Cut, Seen};

use super::history::History;

/// Records in a new cut the kept results that later kept results supersede; returns the
/// estimated tokens that saves. Never fails a request: when supersession is off, the store
/// cannot number the messages or a message cannot be read, nothing is superseded. `history` is
/// what the cut covers and `infos` the request's facts; `overhead_tokens` the request's tokens
/// outside its messages (the cut's stable prefix ends at its first superseded result when that
/// comes before every other change).
pub(super) fn add_supersession(
    config: &Config,
    cut: &mut Cut,
    history: &History,
    infos: &[&MsgInfo],
    overhead_tokens: u32,
) -> u64 {
    let n = cut.covered;
    if !config.supersede || n == 0 {
        return 0;
    }
    let Some(numbers) = history.numbers.as_deref() else {
        return 0;
    };
    // A message older than what the cut read (neither kept nor read) takes part as one
    // without calls or results; any other that cannot be read stops supersession.
    let unread = Message {
        role: Role::Assistant,
        blocks: Vec::new(),
        synthetic: false,
    };
    let Some(views) = history
        .views
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Some(m) => Some(m),
            None if i < history.from && !cut.keeps(i) && !infos[i].real_user => Some(&unread),
            None => None,
        })
        .collect::<Option<Vec<&Message>>>()
    else {
        return 0;
    };
    // The last tool exchange: the last message making calls, and the messages answering them.
    let last_call = infos[..n].iter().rposition(|m| !m.calls.is_empty());
    let last_ids: HashSet<&str> = last_call
        .map(|i| infos[i].calls.iter().map(|(id, _)| id.as_str()).collect())
        .unwrap_or_default();
    let compressed: Vec<Vec<String>> = infos[..n]
        .iter()
        .map(|m| {
            m.compressed
                .iter()
                .filter_map(|c| match &c.part {
                    Part::ToolResult(id) => Some(id.clone()),
                    Part::Text(_) => None,
                })
                .collect()
        })
        .collect();
    let seen: Vec<Seen> = (0..n)
        .map(|i| Seen {
            number: numbers[i],
            kept: cut.keeps(i),
            frozen: infos[i].protected
                || Some(i) == last_call
                || infos[i]
                    .results
                    .iter()
                    .any(|r| last_ids.contains(r.as_str())),
            message: views[i],
            compressed: &compressed[i],
        })
        .collect();
    cut.superseded = supersede(&seen);
    if let Some(first) = cut.superseded.first() {
        let prefix: u64 = infos[..first.at]
            .iter()
            .map(|m| u64::from(m.sent_tokens))
            .sum::<u64>()
            + u64::from(overhead_tokens);
        cut.stable_prefix_tokens = cut.stable_prefix_tokens.min(prefix);
    }
    cut.superseded_tokens()
}
