//! Trim regret, decided once for each new message: a result of a recall tool, or a call made
//! again that the cut in force had taken out of the request. Marked on the message's facts, so
//! the totals survive a restart with the store.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use crate::facts::{NewMessage, Regret};
use crate::fingerprint::{Fp, KeyHasher};
use crate::trim::Cut;

/// What a [`RemovedKeys`] set was built for: the cut's sequence number, how many messages it was
/// built over, and the cut's kept ranges (a lifted cut keeps more under the same number).
type BuiltFor = (u32, usize, Vec<(usize, usize)>);

/// The call keys of the messages a cut removed, kept between requests: the cut in force is the
/// same from one request to the next, so the set is built once per cut, not once per request.
#[derive(Debug, Default)]
pub(super) struct RemovedKeys {
    of: Option<BuiltFor>,
    keys: HashSet<Fp, BuildHasherDefault<KeyHasher>>,
}

/// Whether a tool is one of the recall tools (also under an MCP prefix such as
/// `mcp__smarter-compact__smart_compact_get`).
pub fn is_recall_tool(name: &str) -> bool {
    [
        "smart_compact_get",
        "smart_compact_search",
        "smart_compact_sql",
    ]
    .iter()
    .any(|t| name.ends_with(t))
}

/// Marks the regret of `fresh` (the new messages, from request index `first_new` on) under
/// `cut`, the cut in force. `removed_keys` yields the call keys of request message `i` for the
/// messages the cut removes.
pub(super) fn mark<'a>(
    removed: &mut RemovedKeys,
    fresh: &mut [NewMessage<'_>],
    first_new: usize,
    cut: &Cut,
    keys_of: impl Fn(usize) -> &'a [Fp],
) {
    let over = cut.covered.min(first_new);
    let calls = fresh.iter().any(|m| !m.info.call_keys.is_empty());
    let current = removed
        .of
        .as_ref()
        .is_some_and(|(seq, n, kept)| *seq == cut.seq && *n == over && *kept == cut.kept);
    if calls && !current {
        removed.keys.clear();
        removed.keys.extend(
            (0..over)
                .filter(|&i| !cut.keeps(i))
                .flat_map(|i| keys_of(i).iter().copied()),
        );
        removed.of = Some((cut.seq, over, cut.kept.clone()));
    }
    let removed = &removed.keys;
    for m in fresh.iter_mut() {
        let recall = m
            .outputs
            .iter()
            .any(|o| o.tool_name.as_deref().is_some_and(is_recall_tool) && !o.blank);
        let repeat = calls && m.info.call_keys.iter().any(|k| removed.contains(k));
        m.info.regret = Regret {
            recalls: u32::from(recall),
            repeats: u32::from(repeat),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_tools_are_known_with_or_without_a_prefix() {
        assert!(is_recall_tool("smart_compact_get"));
        assert!(is_recall_tool("mcp__smarter-compact__smart_compact_search"));
        assert!(!is_recall_tool("read"));
    }
}
