//! Requests whose unchanged messages are not sent again. The caller names every message of a
//! request (or every host item, for hosts whose items are read one by one) with an id of its
//! own (the same id for a message it knows to be unchanged, a new one otherwise) and sends the
//! JSON text only of the messages the engine has not seen under their id. A message's chained
//! fingerprint depends on its bytes and on the fingerprint before it, so an unchanged message at
//! the same place after the same history keeps the fingerprint it had; anywhere else its text is
//! needed again. The engine asks for every text (returns `None`) whenever it needs one it lacks,
//! and then plans exactly as from the full request.

use std::ops::Range;

use serde_json::Value;

use super::{Engine, Outcome, TransformOptions};
use crate::error::{Error, Result};
use crate::fingerprint::{FastMap, Fp};
use crate::format::host::{self, HostFormat};
use crate::rewrite::{Edit, OutPlan, Piece, Rewrite};
use crate::store::Store;

/// What the engine remembers of the last cached requests, by the caller's ids: for each
/// message, the fingerprint before it and its own; for each host item, the fingerprint before
/// it and those of its canonical messages, and its edited form when the plan edited it. Ids
/// the latest request did not use are dropped once they outnumber the ones it used, so this
/// holds about one request's worth.
#[derive(Debug, Default)]
pub struct Seen {
    /// The latest canonical request's ids and fingerprints, by place: a message at the same
    /// place after the same history is found without a lookup.
    last: Vec<(u32, Fp)>,
    by_id: FastMap<u32, (Fp, Fp)>,
    items: FastMap<u32, SeenItem>,
    /// The latest host request's item ids by place, with where each item's canonical
    /// messages are in `last_item_fps`.
    last_items: Vec<(u32, Range<usize>)>,
    last_item_fps: Vec<Fp>,
    /// Edited host items of the latest request: the edits made and the piece they gave, its
    /// `from` counted from the item.
    edited: FastMap<u32, (Vec<Edit>, Piece)>,
}

/// A host item the engine has read.
#[derive(Debug)]
struct SeenItem {
    before: Fp,
    fps: Vec<Fp>,
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
        for (i, (id, text)) in ids.iter().zip(texts).enumerate() {
            let before = prev;
            prev = match text {
                Some(t) => prev.then(t.as_bytes()),
                None => match self.last.get(i) {
                    Some(&(last_id, fp)) if last_id == *id && self.last_before(i) == before => fp,
                    _ => match self.by_id.get(id) {
                        Some(&(b, fp)) if b == before => fp,
                        _ => return None,
                    },
                },
            };
            fps.push(prev);
        }
        Some(fps)
    }

    /// The fingerprint before place `i` of the latest canonical request.
    fn last_before(&self, i: usize) -> Fp {
        i.checked_sub(1)
            .and_then(|k| self.last.get(k))
            .map_or(Fp::START, |&(_, fp)| fp)
    }
}

/// Drops the entries of `map` whose ids `ids` does not hold, once they are more than `ids`.
fn prune<V>(map: &mut FastMap<u32, V>, ids: &[u32]) {
    if map.len() > 2 * ids.len() + 64 {
        let keep: FastMap<u32, ()> = ids.iter().map(|&id| (id, ())).collect();
        map.retain(|id, _| keep.contains_key(id));
    }
}

/// The canonical messages of one request by item id: for each, its host item, its JSON text
/// when the item was sent, and its chained fingerprint.
struct ItemsRead {
    items: Vec<Option<Value>>,
    item_of: Vec<usize>,
    texts: Vec<Option<String>>,
    fps: Vec<Fp>,
}

impl ItemsRead {
    /// Reads the sent items; `None` when an item without its text was not seen under its id
    /// right after the same history.
    fn read(
        host: &dyn HostFormat,
        seen: &Seen,
        ids: &[u32],
        texts: &[Option<&str>],
    ) -> Result<Option<ItemsRead>> {
        let mut r = ItemsRead {
            items: Vec::with_capacity(ids.len()),
            item_of: Vec::with_capacity(ids.len() + ids.len() / 2),
            texts: Vec::with_capacity(ids.len() + ids.len() / 2),
            fps: Vec::with_capacity(ids.len() + ids.len() / 2),
        };
        let mut prev = Fp::START;
        for (i, (id, text)) in ids.iter().zip(texts).enumerate() {
            match text {
                Some(t) => {
                    let item = crate::format::parse_message(t, i)?;
                    for c in host.read(std::slice::from_ref(&item))? {
                        let text = c.message.to_string();
                        prev = prev.then(text.as_bytes());
                        r.item_of.push(i);
                        r.texts.push(Some(text));
                        r.fps.push(prev);
                    }
                    r.items.push(Some(item));
                }
                None => {
                    // At the same place after the same history: no lookup.
                    let by_place = seen.last_items.get(i).and_then(|(last, span)| {
                        let before = match span.start {
                            0 => Fp::START,
                            k => seen.last_item_fps[k - 1],
                        };
                        (last == id && before == prev).then(|| &seen.last_item_fps[span.clone()])
                    });
                    let fps = match by_place {
                        Some(fps) => fps,
                        None => match seen.items.get(id).filter(|e| e.before == prev) {
                            Some(e) => e.fps.as_slice(),
                            None => return Ok(None),
                        },
                    };
                    for &fp in fps {
                        r.item_of.push(i);
                        r.texts.push(None);
                        r.fps.push(fp);
                        prev = fp;
                    }
                    r.items.push(None);
                }
            }
        }
        Ok(Some(r))
    }

    fn ranges(&self) -> Vec<Range<usize>> {
        self.item_of.iter().map(|&i| i..i + 1).collect()
    }
}

/// Whether the edits planned for the items `range` are those of `cached`.
fn same_edits(cached: &[Edit], edits: &[&Edit]) -> bool {
    cached.len() == edits.len() && cached.iter().zip(edits).all(|(a, b)| a == *b)
}

impl<S: Store> Engine<S> {
    /// Rewrites one request given by message ids, in a canonical wire format (`openai`,
    /// `anthropic`: one id per message) or a host format whose items are read one by one
    /// (`opencode`, `pi`: one id per item), with `texts[i]` the JSON text of message or item
    /// `i`, or `None` for one the caller sent under the same id before and has not changed
    /// since. `Ok(None)`: a text is needed that was not sent (one not seen in that place, a new
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
        if ids.len() != texts.len() {
            return Err(Error::InvalidArgument(
                "one id per message, and one text or none per message".into(),
            ));
        }
        match opts.format.host() {
            None => self.canonical_cached(ids, texts, opts),
            Some(h) if h.by_item() => self.items_cached(h, ids, texts, opts),
            Some(_) => Err(Error::InvalidArgument(
                "requests by message id take the openai, anthropic, opencode or pi format".into(),
            )),
        }
    }

    fn canonical_cached(
        &mut self,
        ids: &[u32],
        texts: &[Option<&str>],
        opts: &TransformOptions,
    ) -> Result<Option<Outcome>> {
        let Some(fps) = self.seen.fingerprints(ids, texts) else {
            return Ok(None);
        };
        let Some((plan, stats)) = self.transform_canonical(texts, &fps, opts, &|_| true)? else {
            return Ok(None);
        };
        // Only the messages sent are new or moved; the others were checked to be as they were.
        let mut prev = Fp::START;
        for ((&id, text), &fp) in ids.iter().zip(texts).zip(&fps) {
            if text.is_some() {
                self.seen.by_id.insert(id, (prev, fp));
            }
            prev = fp;
        }
        prune(&mut self.seen.by_id, ids);
        self.seen.last.clear();
        self.seen.last.extend(ids.iter().copied().zip(fps));
        Ok(Some(Outcome {
            rewrite: plan.rewrite(),
            stats,
        }))
    }

    fn items_cached(
        &mut self,
        host: &dyn HostFormat,
        ids: &[u32],
        texts: &[Option<&str>],
        opts: &TransformOptions,
    ) -> Result<Option<Outcome>> {
        let Some(read) = ItemsRead::read(host, &self.seen, ids, texts)? else {
            return Ok(None);
        };
        let ranges = read.ranges();
        let edited = std::mem::take(&mut self.seen.edited);
        // An edited item the caller did not send is served from its edited form of the
        // request before, when the edits are the same.
        let servable = |range: &Range<usize>, edits: &[&Edit]| {
            range.clone().all(|i| read.items[i].is_some())
                || edited
                    .get(&ids[range.start])
                    .is_some_and(|(e, _)| same_edits(e, edits))
        };
        let accept = |plan: &OutPlan| {
            host::groups(plan, &ranges)
                .iter()
                .all(|(range, edits)| edits.is_empty() || servable(range, edits))
        };
        let canon_texts: Vec<Option<&str>> = read.texts.iter().map(|t| t.as_deref()).collect();
        let (plan, mut stats) =
            match self.transform_canonical(&canon_texts, &read.fps, opts, &accept) {
                Ok(Some(done)) => done,
                other => {
                    self.seen.edited = edited;
                    return other.map(|_| None);
                }
            };
        let mut rewrite = Rewrite::default();
        let mut now_edited = FastMap::default();
        for (range, edits) in host::groups(&plan, &ranges) {
            if edits.is_empty() {
                range.for_each(|i| rewrite.keep(i));
                continue;
            }
            let start = range.start;
            let sent = range.clone().all(|i| read.items[i].is_some());
            let piece = match edited.get(&ids[start]) {
                Some((e, p)) if !sent && same_edits(e, &edits) => relocate(p, start, true),
                _ => {
                    let items = range.map(|i| (i, read.items[i].clone().unwrap_or_default()));
                    host::edited(host, items, &edits)
                }
            };
            let kept = edits.into_iter().cloned().collect();
            now_edited.insert(ids[start], (kept, relocate(&piece, start, false)));
            rewrite.pieces.push(piece);
        }
        self.seen.edited = now_edited;
        let mut prev = Fp::START;
        let mut c = 0;
        self.seen.last_items.clear();
        for (i, &id) in ids.iter().enumerate() {
            let from = c;
            while c < read.item_of.len() && read.item_of[c] == i {
                c += 1;
            }
            if read.items[i].is_some() {
                let fps = read.fps[from..c].to_vec();
                self.seen.items.insert(id, SeenItem { before: prev, fps });
            }
            self.seen.last_items.push((id, from..c));
            prev = read.fps[..c].last().copied().unwrap_or(prev);
        }
        prune(&mut self.seen.items, ids);
        self.seen.last_item_fps.clear();
        self.seen.last_item_fps.extend_from_slice(&read.fps);
        stats.messages_before = ids.len();
        stats.messages_after = rewrite.len();
        Ok(Some(Outcome { rewrite, stats }))
    }
}

/// `piece` with its `from` indices moved to start at `start` (`to`: true) or back to 0.
fn relocate(piece: &Piece, start: usize, to: bool) -> Piece {
    match piece {
        Piece::Keep(a, b) => Piece::Keep(*a, *b),
        Piece::Replace { from, items } => Piece::Replace {
            from: from
                .iter()
                .map(|&i| {
                    if to {
                        i + start
                    } else {
                        i.saturating_sub(start)
                    }
                })
                .collect(),
            items: items.clone(),
        },
    }
}
