//! Putting the digest of a new cut after its pointer.

use crate::config::Config;
use crate::digest::{build, Entry};
use crate::facts::MsgInfo;
use crate::fingerprint::Fp;
use crate::format::WireFormat;
use crate::message::Message;
use crate::store::Store;
use crate::tokens::estimate_text;
use crate::trim::Cut;

/// Tokens the planner keeps free for the digest of a cut at threshold `trim_at`.
pub(super) fn reserve(config: &Config, trim_at: u32) -> u32 {
    (config.digest_fraction * f64::from(trim_at)) as u32
}

/// Builds the digest of a new cut over the request's messages and appends it to the cut's
/// pointer; returns its estimated tokens. The digest never fails a request: when the store
/// cannot number the messages, or nothing left, there is none. `raws`, `fps` and `infos` are
/// the request's messages, their fingerprints and facts.
pub(super) fn add_digest<S: Store>(
    config: &Config,
    store: &mut S,
    cut: &mut Cut,
    (raws, fps, infos): (&[&str], &[Fp], &[&MsgInfo]),
    adapter: &dyn WireFormat,
    trim_at: u32,
) -> u64 {
    let budget = reserve(config, trim_at);
    if cut.pointer_at.is_none() || budget == 0 {
        return 0;
    }
    let Ok(numbers) = store.message_numbers(&fps[..cut.covered]) else {
        return 0;
    };
    let views: Vec<Option<Message>> = raws[..cut.covered]
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            crate::format::parse_message(raw, i)
                .ok()
                .and_then(|v| adapter.view(&v, i).ok())
        })
        .collect();
    let entries: Vec<Entry> = views
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            v.as_ref().map(|message| Entry {
                number: numbers[i],
                kept: cut.keeps(i),
                real_user: infos[i].real_user,
                message,
                compressed: &infos[i].compressed,
            })
        })
        .collect();
    let digest = build(&entries, budget, config.digest_parts);
    if digest.is_empty() {
        return 0;
    }
    let tokens = u64::from(estimate_text(&digest)) + 1;
    cut.pointer = format!("{}\n{digest}", cut.pointer);
    cut.digest_tokens = tokens;
    tokens
}
