//! Putting the digest of a new cut after its pointer, and writing what the cut teaches to the
//! memory bank.

use crate::config::Config;
use crate::digest::{build, Entry};
use crate::facts::MsgInfo;
use crate::memory::from_cut::{cut_memories, CUT_KIND};
use crate::memory::recall::Recall;
use crate::tokens::estimate_text;
use crate::trim::Cut;

use super::history::History;

/// Tokens the planner keeps free for the digest of a cut at threshold `trim_at`.
pub(super) fn reserve(config: &Config, trim_at: u32) -> u32 {
    (config.digest_fraction * f64::from(trim_at)) as u32
}

/// Where the memories of a new cut go: the bank, the session they are attributed to, the clock.
pub(super) struct Learn<'a> {
    pub bank: &'a mut dyn Recall,
    pub session: &'a str,
    pub now_ms: u64,
}

/// Builds the digest of a new cut over what it covers (`history`, with the request's facts
/// `infos`) and appends it to the cut's pointer; returns its estimated tokens. With a bank
/// (`learn`), the cut's memories are written to it from the same entries, whatever the
/// digest's budget. Neither ever fails a request: when the store cannot number the messages,
/// or nothing left, there is no digest and no memory; a bank that fails is passed over.
pub(super) fn add_digest(
    (config, learn): (&Config, Option<Learn>),
    cut: &mut Cut,
    history: &History,
    infos: &[&MsgInfo],
    trim_at: u32,
) -> u64 {
    let budget = reserve(config, trim_at);
    if cut.pointer_at.is_none() || (budget == 0 && learn.is_none()) {
        return 0;
    }
    let Some(numbers) = history.numbers.as_deref() else {
        return 0;
    };
    let entries: Vec<Entry> = history
        .views
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            v.as_ref().map(|message| Entry {
                number: numbers[i],
                kept: cut.keeps(i),
                real_user: infos[i].real_user,
                message,
                compressed: &infos[i].compressed,
                gists: Some(&history.gists[i][..]),
            })
        })
        .collect();
    if let Some(l) = learn {
        // A bank that cannot be written only means nothing learnt from this cut.
        let _ = l
            .bank
            .remember(CUT_KIND, &cut_memories(&entries, l.session), l.now_ms);
    }
    if budget == 0 {
        return 0;
    }
    let digest = build(&entries, budget, config.digest_parts);
    if digest.is_empty() {
        return 0;
    }
    let tokens = u64::from(estimate_text(&digest)) + 1;
    cut.pointer = format!("{}\n{digest}", cut.pointer);
    cut.digest_tokens = tokens;
    tokens
}
