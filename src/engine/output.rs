//! Building the rewritten request from the cut (pointer, thinking strip, superseded results) and
//! the compression decisions, with caches so a
//! message is edited once per process, not once per request.

use std::sync::Arc;

use serde_json::Value;

use crate::compress::compress;
use crate::error::Result;
use crate::facts::{MsgInfo, Part};
use crate::fingerprint::{FastMap, Fp};
use crate::format::WireFormat;
use crate::message::Block;
use crate::rewrite::{Edit, Edited, OutPlan};
use crate::tokens::estimate_text;
use crate::trim::{Cut, Superseded};

/// Edited messages already built in this process.
#[derive(Default)]
pub(super) struct Cache {
    /// Messages with their large parts compressed, by fingerprint.
    compressed: FastMap<Fp, (Arc<str>, Vec<Edit>)>,
    /// Messages edited by a cut (pointer, thinking strip), by (cut seq, fingerprint).
    edited: FastMap<(u32, Fp), Arc<Edited>>,
}

/// Estimated tokens of the request as sent with `cut` applied (without host overhead).
pub(super) fn sent_tokens(infos: &[&MsgInfo], cut: Option<&Cut>) -> u64 {
    let sum = |range: &[&MsgInfo]| range.iter().map(|m| u64::from(m.sent_tokens)).sum::<u64>();
    match cut {
        None => sum(infos),
        Some(c) => {
            let kept: u64 = c.kept.iter().map(|&(a, b)| sum(&infos[a..b])).sum();
            let pointer = if c.pointer_at.is_some() {
                u64::from(estimate_text(&c.pointer)) + 2
            } else {
                0
            };
            (kept + pointer + sum(&infos[c.covered.min(infos.len())..]))
                .saturating_sub(c.superseded_tokens())
        }
    }
}

/// How the cut in force edits one message of the request.
struct CutEdits<'a> {
    /// The cut, when it covers the message.
    in_cut: Option<&'a Cut>,
    /// The message carries the cut's pointer.
    pointer: bool,
    /// Its signed thinking is stripped.
    strip: bool,
    /// Its results sent as references to later ones.
    superseded: &'a [Superseded],
}

impl<'a> CutEdits<'a> {
    fn of(cut: Option<&'a Cut>, i: usize) -> CutEdits<'a> {
        let in_cut = cut.filter(|c| i < c.covered);
        // `superseded` is sorted by message index.
        let superseded = in_cut.map_or(&[][..], |c| {
            let from = c.superseded.partition_point(|s| s.at < i);
            let to = c.superseded.partition_point(|s| s.at <= i);
            &c.superseded[from..to]
        });
        CutEdits {
            in_cut,
            pointer: in_cut.is_some_and(|c| c.pointer_at == Some(i)),
            strip: in_cut.is_some_and(|c| c.strip_thinking.binary_search(&i).is_ok()),
            superseded,
        }
    }

    /// The message is left out of the request.
    fn removed(&self, i: usize) -> bool {
        self.in_cut.is_some_and(|c| !c.keeps(i))
    }

    /// The cut edits the message.
    fn edits(&self) -> bool {
        self.pointer || self.strip || !self.superseded.is_empty()
    }

    /// The key of the message's edited form in [`Cache::edited`].
    fn key(&self, fp: Fp) -> (u32, Fp) {
        (
            self.in_cut.filter(|_| self.edits()).map_or(0, |c| c.seq),
            fp,
        )
    }
}

/// The places of the messages `cut` leaves in a request of `n` messages, in order: its kept
/// ranges, then every message after it (all of them without a cut). Strictly increasing, also
/// for kept ranges out of order (a cut read back from a damaged store): no message twice.
fn visible(cut: Option<&Cut>, n: usize) -> impl Iterator<Item = usize> + '_ {
    let covered = cut.map_or(0, |c| c.covered.min(n));
    let mut next = 0;
    cut.into_iter()
        .flat_map(move |c| {
            c.kept
                .iter()
                .map(move |&(a, b)| a.min(covered)..b.min(covered))
        })
        .flatten()
        .chain(covered..n)
        .filter(move |&i| {
            let fresh = i >= next;
            next = next.max(i + 1);
            fresh
        })
}

/// The messages whose text [`build`] needs and `texts` lacks, in order: those it edits whose
/// edited form is not in the cache yet.
pub(super) fn missing_texts(
    cache: &Cache,
    texts: &[Option<&str>],
    fps: &[Fp],
    infos: &[&MsgInfo],
    cut: Option<&Cut>,
) -> Vec<usize> {
    let covered = cut.map_or(0, |c| c.covered);
    visible(cut, texts.len())
        .filter(|&i| {
            let compressed = !infos[i].compressed.is_empty();
            // After the cut, only a compressed message is ever edited.
            if texts[i].is_some() || (i >= covered && !compressed) {
                return false;
            }
            let e = CutEdits::of(cut, i);
            if e.removed(i)
                || !(e.edits() || compressed)
                || cache.edited.contains_key(&e.key(fps[i]))
            {
                return false;
            }
            !compressed || !cache.compressed.contains_key(&fps[i])
        })
        .collect()
}

/// The edit plan for a request.
pub(super) fn build(
    cache: &mut Cache,
    raws: &[&str],
    fps: &[Fp],
    infos: &[&MsgInfo],
    cut: Option<&Cut>,
    adapter: &dyn WireFormat,
) -> Result<OutPlan> {
    let mut plan = OutPlan::default();
    let covered = cut.map_or(0, |c| c.covered);
    // The edited messages this request sends: the cache keeps about these, not every message
    // the session ever edited.
    let mut used: FastMap<Fp, ()> = FastMap::default();
    for i in visible(cut, raws.len()) {
        if i >= covered && infos[i].compressed.is_empty() {
            plan.keep(i);
            continue;
        }
        let e = CutEdits::of(cut, i);
        if e.removed(i) {
            continue;
        }
        let by_cut = e.edits();
        let compressed = !infos[i].compressed.is_empty();
        if !by_cut && !compressed {
            plan.keep(i);
            continue;
        }
        let key = e.key(fps[i]);
        used.insert(fps[i], ());
        if let Some(hit) = cache.edited.get(&key) {
            plan.replace(hit.clone());
            continue;
        }
        let (base, mut edits) = if compressed {
            compressed_message(cache, raws[i], fps[i], infos[i], adapter, i)?
        } else {
            (Arc::from(raws[i]), Vec::new())
        };
        let message = match e.in_cut.filter(|_| by_cut) {
            None => base,
            Some(c) => {
                let mut v = parse(&base, i)?;
                for s in e.superseded {
                    adapter.set_tool_result_text(&mut v, &s.call_id, &s.text);
                    edits.retain(
                        |e| !matches!(e, Edit::Compress { call_id, .. } if *call_id == s.call_id),
                    );
                    edits.push(Edit::Compress {
                        call_id: s.call_id.clone(),
                        text: s.text.clone(),
                    });
                }
                if e.strip && adapter.strip_signed_thinking(&mut v) {
                    edits.push(Edit::StripThinking {});
                }
                if e.pointer {
                    adapter.prepend_text(&mut v, &c.pointer);
                    edits.push(Edit::Prepend(c.pointer.clone()));
                }
                Arc::from(v.to_string())
            }
        };
        let edited = Arc::new(Edited {
            index: i,
            message,
            edits,
        });
        cache.edited.insert(key, edited.clone());
        plan.replace(edited);
    }
    cache.prune(&used);
    Ok(plan)
}

impl Cache {
    /// Drops the edited forms of messages `used` does not hold, once they are more than twice
    /// as many: a message the cut removed is not sent again until a restore, which rebuilds it.
    fn prune(&mut self, used: &FastMap<Fp, ()>) {
        if self.compressed.len() + self.edited.len() > 4 * used.len() + 64 {
            self.compressed.retain(|fp, _| used.contains_key(fp));
            self.edited.retain(|(_, fp), _| used.contains_key(fp));
        }
    }
}

/// The message with its compressed parts replaced by their head/tail text, and those edits.
fn compressed_message(
    cache: &mut Cache,
    raw: &str,
    fp: Fp,
    info: &MsgInfo,
    adapter: &dyn WireFormat,
    index: usize,
) -> Result<(Arc<str>, Vec<Edit>)> {
    if let Some(hit) = cache.compressed.get(&fp) {
        return Ok(hit.clone());
    }
    let mut edits = Vec::new();
    let mut v = parse(raw, index)?;
    let view = adapter.view(&v, index)?;
    for c in &info.compressed {
        let text = match &c.part {
            Part::ToolResult(id) => view.blocks.iter().find_map(|b| match b {
                Block::ToolResult { call_id, text, .. } if call_id == id => Some(text),
                _ => None,
            }),
            Part::Text(nth) => view
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Text(t) => Some(t),
                    _ => None,
                })
                .nth(*nth),
        };
        // Forced: the decision was made at first sight; the text depends only on the content.
        let Some(short) = text.and_then(|t| compress(t, 0)) else {
            continue;
        };
        match &c.part {
            Part::ToolResult(id) => {
                adapter.set_tool_result_text(&mut v, id, &short.text);
                edits.push(Edit::Compress {
                    call_id: id.clone(),
                    text: short.text,
                });
            }
            Part::Text(nth) => {
                adapter.set_text(&mut v, *nth, &short.text);
                edits.push(Edit::CompressText {
                    nth: *nth,
                    text: short.text,
                });
            }
        }
    }
    let out = (Arc::<str>::from(v.to_string()), edits);
    cache.compressed.insert(fp, out.clone());
    Ok(out)
}

fn parse(text: &str, index: usize) -> Result<Value> {
    crate::format::parse_message(text, index)
}
