//! An in-memory [`Store`]: the engine's state for one process, nothing persisted.

use std::collections::{HashMap, HashSet};

use super::{Loaded, RequestRecord, RequestWrite, Store, StoreCounts};
use crate::error::Result;
use crate::facts::{Blob, StoredMessage};
use crate::fingerprint::Fp;
use crate::trim::Cut;

/// A store that keeps everything in memory.
#[derive(Debug, Default, Clone)]
pub struct MemStore {
    /// Stored messages with their `in_context` flag, in arrival order.
    pub messages: Vec<(StoredMessage, bool)>,
    /// Blobs by id.
    pub blobs: HashMap<String, Blob>,
    /// Cuts, oldest first.
    pub cuts: Vec<Cut>,
    /// Recorded requests.
    pub requests: Vec<RequestRecord>,
    /// Cuts the next request is asked to lift.
    pub restores_pending: u32,
}

impl Store for MemStore {
    fn load(&mut self) -> Result<Loaded> {
        let mut loaded = Loaded {
            messages: self.messages.iter().map(|(m, _)| m.info.clone()).collect(),
            cuts: self.cuts.clone(),
            ..Loaded::default()
        };
        for r in &self.requests {
            loaded.usage.add(r);
            if !r.fail_open {
                loaded.last_request = Some(r.clone());
            }
        }
        Ok(loaded)
    }

    fn commit(&mut self, w: &RequestWrite) -> Result<()> {
        self.messages.extend(w.messages.iter().map(|m| {
            let stored = StoredMessage {
                info: m.info.clone(),
                json: m.json.to_string(),
            };
            (stored, true)
        }));
        for b in w.blobs {
            self.blobs.entry(b.id.clone()).or_insert_with(|| b.clone());
        }
        if let Some((cut, removed)) = w.cut {
            self.cuts.push(cut.clone());
            let removed: HashSet<_> = removed.iter().collect();
            for (m, in_context) in &mut self.messages {
                if removed.contains(&m.info.fp) {
                    *in_context = false;
                }
            }
        }
        for (cut, back) in w.lifted {
            if let Some(c) = self.cuts.iter_mut().find(|c| c.seq == cut.seq) {
                *c = (*cut).clone();
            }
            let back: HashSet<_> = back.iter().collect();
            for (m, in_context) in &mut self.messages {
                if back.contains(&m.info.fp) {
                    *in_context = true;
                }
            }
        }
        if w.restores_served {
            self.restores_pending = 0;
        }
        self.requests.push(w.request.clone());
        Ok(())
    }

    fn restores_pending(&mut self) -> Result<u32> {
        Ok(self.restores_pending)
    }

    fn request_restore(&mut self) -> Result<u32> {
        self.restores_pending += 1;
        Ok(self.restores_pending)
    }

    fn message_numbers(&mut self, fps: &[Fp]) -> Result<Vec<u64>> {
        let stored: HashMap<Fp, u64> = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, (m, _))| (m.info.fp, i as u64 + 1))
            .collect();
        Ok(super::number_messages(
            &stored,
            self.messages.len() as u64,
            fps,
        ))
    }

    fn message_texts(&mut self, fps: &[Fp]) -> Result<Vec<Option<String>>> {
        let by_fp: HashMap<Fp, &str> = self
            .messages
            .iter()
            .map(|(m, _)| (m.info.fp, m.json.as_str()))
            .collect();
        Ok(fps
            .iter()
            .map(|fp| by_fp.get(fp).map(|s| s.to_string()))
            .collect())
    }

    fn blob(&mut self, id: &str) -> Result<Option<Blob>> {
        Ok(self.blobs.get(id).cloned())
    }

    fn counts(&mut self) -> Result<StoreCounts> {
        let n = self.messages.len() as u64;
        Ok(StoreCounts {
            messages: n,
            in_context: self.messages.iter().filter(|(_, c)| *c).count() as u64,
            blobs: self.blobs.len() as u64,
            writers: if n > 0 {
                vec![(crate::VERSION.to_string(), n)]
            } else {
                Vec::new()
            },
        })
    }
}
