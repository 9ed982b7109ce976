//! The history a new cut reads for its supersession, digest, memories and recall: every
//! message it covers, read once. Kept messages are read whole; the others as supersession and
//! the digest read them (their text and calls, and the gists of their tool results instead of
//! the results' text), so a cut over a long session holds a fraction of it.

use super::texts::Texts;
use crate::digest::Gist;
use crate::error::Result;
use crate::fingerprint::Fp;
use crate::format::WireFormat;
use crate::message::{Block, Message};
use crate::store::Store;
use crate::trim::Cut;

/// The messages a new cut covers.
pub(super) struct History {
    /// Each message's view (`None`: it cannot be read); without tool result texts when the cut
    /// does not keep it.
    pub views: Vec<Option<Message>>,
    /// The gists of each message's tool results, in order.
    pub gists: Vec<Vec<Gist>>,
    /// Each message's number in the store (`None`: the store could not number them).
    pub numbers: Option<Vec<u64>>,
}

impl History {
    /// Reads the messages `cut` covers from `texts` (the store for those not given).
    pub fn read<S: Store>(
        store: &mut S,
        texts: &Texts,
        fps: &[Fp],
        cut: &Cut,
        adapter: &dyn WireFormat,
    ) -> Result<History> {
        let n = cut.covered;
        let mut views = Vec::with_capacity(n);
        let mut gists = Vec::with_capacity(n);
        texts.each(store, 0..n, |i, raw| {
            let view = crate::format::parse_message(raw, i)
                .ok()
                .and_then(|v| adapter.view(&v, i).ok());
            gists.push(view.as_ref().map(Gist::of_message).unwrap_or_default());
            views.push(view.map(|m| if cut.keeps(i) { m } else { lean(m) }));
            Ok(())
        })?;
        let numbers = store.message_numbers(&fps[..n]).ok();
        Ok(History {
            views,
            gists,
            numbers,
        })
    }
}

/// A removed message as the cut reads it: its text and calls, its tool results without their
/// text (their gists stand for it), nothing else.
fn lean(mut m: Message) -> Message {
    m.blocks.retain_mut(|b| match b {
        Block::Text(_) | Block::ToolCall { .. } => true,
        Block::ToolResult { text, .. } => {
            *text = String::new();
            true
        }
        Block::Thinking { .. } | Block::Image | Block::Other(_) => false,
    });
    m.blocks.shrink_to_fit();
    m
}
