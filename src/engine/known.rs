//! The facts of every message the session has seen, by chained fingerprint. They are kept in
//! one vector in the order they were first seen, with an index by fingerprint, and the places of
//! the latest request's messages are remembered: the next request, which repeats that history
//! and adds a few messages, finds its known messages by place, without hashing.

use crate::facts::MsgInfo;
use crate::fingerprint::{FastMap, Fp};

/// Every message seen, by chained fingerprint.
#[derive(Debug, Default)]
pub(super) struct Known {
    infos: Vec<MsgInfo>,
    index: FastMap<Fp, u32>,
    /// Where the latest request's known messages are in `infos`, by their place in it.
    order: Vec<u32>,
}

impl Known {
    /// The facts of these messages (later ones with the same fingerprint replace earlier ones).
    pub fn new(infos: impl IntoIterator<Item = MsgInfo>) -> Known {
        let mut k = Known::default();
        for m in infos {
            k.insert(m);
        }
        k
    }

    /// Records a message's facts.
    pub fn insert(&mut self, m: MsgInfo) {
        match self.index.get(&m.fp) {
            Some(&at) => self.infos[at as usize] = m,
            None => {
                self.index.insert(m.fp, self.infos.len() as u32);
                self.infos.push(m);
            }
        }
    }

    /// Whether a message with this fingerprint was seen.
    pub fn contains(&self, fp: &Fp) -> bool {
        self.index.contains_key(fp)
    }

    /// Messages seen.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// The facts of every message seen.
    pub fn values(&self) -> impl Iterator<Item = &MsgInfo> {
        self.infos.iter()
    }

    /// The facts of the request's known messages from its start up to its last known one (or
    /// up to a message that is not known, should one come first), and where each is kept (for
    /// [`Known::remember`]).
    pub fn prefix(&self, fps: &[Fp]) -> (Vec<&MsgInfo>, Vec<u32>) {
        let end = fps
            .iter()
            .rposition(|f| self.contains(f))
            .map_or(0, |i| i + 1);
        let mut infos = Vec::with_capacity(fps.len());
        let mut at = Vec::with_capacity(fps.len());
        for (i, fp) in fps[..end].iter().enumerate() {
            let by_place = self
                .order
                .get(i)
                .copied()
                .filter(|&k| self.infos.get(k as usize).is_some_and(|m| m.fp == *fp));
            let Some(k) = by_place.or_else(|| self.index.get(fp).copied()) else {
                break;
            };
            infos.push(&self.infos[k as usize]);
            at.push(k);
        }
        (infos, at)
    }

    /// Remembers where the latest request's messages are kept: `at` from [`Known::prefix`],
    /// then the messages recorded after it (`fps`).
    pub fn remember(&mut self, mut at: Vec<u32>, fps: &[Fp]) {
        at.extend(fps.iter().filter_map(|f| self.index.get(f).copied()));
        self.order = at;
    }
}
