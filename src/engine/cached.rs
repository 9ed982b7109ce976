//! Requests whose unchanged messages are not sent again. The caller names every message of a
//! request with an id of its own (the same id for a message it knows to be unchanged, a new one
//! otherwise) and sends the JSON text only of the messages the engine has not seen under their
//! id. A message's chained fingerprint depends on its bytes and on the fingerprint before it, so
//! an unchanged message at the same place after the same history keeps the fingerprint it had;
//! anywhere else its text is needed again. The engine asks for every text (returns `None`)
//! whenever it needs one it lacks, and then plans exactly as from the full request.

use super::{Engine, Outcome, TransformOptions};
use crate::error::{Error, Result};
use crate::fingerprint::{FastMap, Fp};
use crate::store::Store;

/// What the engine remembers of the last cached request: for each of its message ids, the
/// fingerprint before the message and the message's own. Replaced by each request, so it
/// holds at most one request's messages.
#[derive(Debug, Default)]
pub struct Seen {
    by_id: FastMap<u32, (Fp, Fp)>,
}

/// The chained fingerprints of messages with these JSON texts.
pub(super) fn chain(raws: &[&str]) -> Vec<Fp> {
    let mut fp = Fp::START;
    raws.iter()
        .map(|raw| {
            fp = fp.then(raw.as_bytes());
            fp
        })
        .collect()
}

impl Seen {
    /// The chained fingerprints of a request with these ids and texts; `None` when a message
    /// without its text was not seen under its id right after the same history.
    fn fingerprints(&self, ids: &[u32], texts: &[Option<&str>]) -> Option<Vec<Fp>> {
        let mut prev = Fp::START;
        let mut fps = Vec::with_capacity(ids.len());
        for (id, text) in ids.iter().zip(texts) {
            prev = match text {
                Some(t) => prev.then(t.as_bytes()),
                None => match self.by_id.get(id) {
                    Some(&(before, fp)) if before == prev => fp,
                    _ => return None,
                },
            };
            fps.push(prev);
        }
        Some(fps)
    }
}

impl<S: Store> Engine<S> {
    /// Rewrites one request of a canonical wire format (`openai`, `anthropic`) given by message
    /// ids, with `texts[i]` the JSON text of message `i` or `None` for a message the caller
    /// sent under the same id in the previous cached request and has not changed since.
    /// `Ok(None)`: a text is needed that was not sent (a message not seen in that place, a new
    /// cut, or an edit this process has not built yet); the caller sends the request again with
    /// every text. Nothing is changed or recorded then. The outcome is the one
    /// [`Engine::transform`] gives for the full request.
    pub fn transform_cached(
        &mut self,
        ids: &[u32],
        texts: &[Option<&str>],
        opts: &TransformOptions,
    ) -> Result<Option<Outcome>> {
        if self.store.is_read_only() {
            return Err(Error::ReadOnly(
                "cannot rewrite a request: the session store was opened read-only".into(),
            ));
        }
        if opts.format.host().is_some() {
            return Err(Error::InvalidArgument(
                "requests by message id take the openai or anthropic format".into(),
            ));
        }
        if ids.len() != texts.len() {
            return Err(Error::InvalidArgument(
                "one id per message, and one text or none per message".into(),
            ));
        }
        let Some(fps) = self.seen.fingerprints(ids, texts) else {
            return Ok(None);
        };
        let Some((plan, stats)) = self.transform_canonical(texts, &fps, opts)? else {
            return Ok(None);
        };
        // Cleared, not rebuilt: the table keeps its capacity from one request to the next.
        let mut prev = Fp::START;
        self.seen.by_id.clear();
        self.seen.by_id.extend(
            ids.iter()
                .zip(&fps)
                .map(|(&id, &fp)| (id, (std::mem::replace(&mut prev, fp), fp))),
        );
        Ok(Some(Outcome {
            rewrite: plan.rewrite(),
            stats,
        }))
    }
}
