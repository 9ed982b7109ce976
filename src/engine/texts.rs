//! The JSON texts of a request's messages: those the caller sent, and the others read back from
//! the store, which holds every message the engine has seen (each is written with the request
//! that first brings it). A cut reads its history this way a batch at a time, so the
//! caller never has to send the session again and the engine never holds all of it at once.

use crate::error::{Error, Result};
use crate::fingerprint::Fp;
use crate::store::Store;

/// Messages read from the store per query.
const BATCH: usize = 256;

/// The texts of one request's messages.
pub(super) struct Texts<'a> {
    given: &'a [Option<&'a str>],
    fps: &'a [Fp],
}

impl<'a> Texts<'a> {
    /// The texts `given` by the caller (`None`: not sent) of messages with chained fingerprints
    /// `fps`.
    pub fn new(given: &'a [Option<&'a str>], fps: &'a [Fp]) -> Self {
        Texts { given, fps }
    }

    /// Calls `f(i, text)` for each message `i` of `indices` (ascending), reading the texts not
    /// given from the store, [`BATCH`] messages at a time. E_STORE when the store lacks one, or
    /// holds bytes for it that do not give its fingerprint.
    pub fn each<S: Store>(
        &self,
        store: &mut S,
        indices: impl IntoIterator<Item = usize>,
        mut f: impl FnMut(usize, &str) -> Result<()>,
    ) -> Result<()> {
        let mut batch: Vec<usize> = Vec::with_capacity(BATCH);
        let mut indices = indices.into_iter().peekable();
        while indices.peek().is_some() {
            batch.clear();
            batch.extend(indices.by_ref().take(BATCH));
            let missing: Vec<Fp> = batch
                .iter()
                .filter(|&&i| self.given[i].is_none())
                .map(|&i| self.fps[i])
                .collect();
            let mut read = if missing.is_empty() {
                Vec::new()
            } else {
                store.message_texts(&missing)?
            }
            .into_iter();
            for &i in &batch {
                match self.given[i] {
                    Some(t) => f(i, t)?,
                    None => {
                        let text = read.next().flatten().ok_or_else(|| {
                            Error::Store(format!("message {i} of the request is not in the store"))
                        })?;
                        let before = i.checked_sub(1).map_or(Fp::START, |k| self.fps[k]);
                        if before.then(text.as_bytes()) != self.fps[i] {
                            return Err(Error::Store(format!(
                                "the store holds other bytes for message {i} of the request"
                            )));
                        }
                        f(i, &text)?;
                    }
                }
            }
        }
        Ok(())
    }
}
