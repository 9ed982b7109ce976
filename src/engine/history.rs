//! The history a new cut reads for its supersession, digest, memories and recall: the messages
//! it covers, read once. Kept messages are read whole; the others as supersession and the
//! digest read them (their text and calls, and the gists of their tool results instead of the
//! results' text), so a cut over a long session holds a fraction of it. Of a very long session
//! the cut reads the newest [`READ_BACK_MESSAGES`] messages, every kept one and every real user
//! turn: its memory and time stay bounded however long the session grows, and what it does not
//! read stays in the store, where the recall tools find it.

use super::texts::Texts;
use crate::digest::Gist;
use crate::error::Result;
use crate::facts::MsgInfo;
use crate::fingerprint::Fp;
use crate::format::WireFormat;
use crate::message::{Block, Message};
use crate::store::Store;
use crate::trim::Cut;

/// How many of the newest messages a cut covers it reads, at most, besides the kept ones and
/// the real user turns.
pub(super) const READ_BACK_MESSAGES: usize = 10_000;

/// The messages a new cut covers.
pub(super) struct History {
    /// Each message's view (`None`: it cannot be read, or it is older than `from` and neither
    /// kept nor a real user turn); without tool result texts when the cut does not keep it.
    pub views: Vec<Option<Message>>,
    /// The first message read whatever it is.
    pub from: usize,
    /// The gists of each message's tool results, in order.
    pub gists: Vec<Box<[Gist]>>,
    /// Each message's number in the store (`None`: the store could not number them).
    pub numbers: Option<Vec<u64>>,
}

impl History {
    /// Reads the messages `cut` covers from `texts` (the store for those not given): the
    /// newest [`READ_BACK_MESSAGES`], and before them the kept ones and the real user turns
    /// (`infos`: the request's facts).
    pub fn read<S: Store>(
        store: &mut S,
        (texts, infos): (&Texts, &[&MsgInfo]),
        fps: &[Fp],
        cut: &Cut,
        adapter: &dyn WireFormat,
    ) -> Result<History> {
        let n = cut.covered;
        let from = n.saturating_sub(READ_BACK_MESSAGES);
        let mut views: Vec<Option<Message>> = Vec::with_capacity(n);
        let mut gists: Vec<Box<[Gist]>> = Vec::with_capacity(n);
        let wanted = (0..n).filter(|&i| i >= from || cut.keeps(i) || infos[i].real_user);
        texts.each(store, wanted, |i, raw| {
            views.resize_with(i, || None);
            gists.resize_with(i, Box::default);
            let view = crate::format::parse_message(raw, i)
                .ok()
                .and_then(|v| adapter.view(&v, i).ok());
            gists.push(
                view.as_ref()
                    .map(Gist::of_message)
                    .unwrap_or_default()
                    .into(),
            );
            views.push(view.map(|m| if cut.keeps(i) { m } else { lean(m) }));
            Ok(())
        })?;
        let numbers = store.message_numbers(&fps[..n]).ok();
        Ok(History {
            views,
            from,
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
