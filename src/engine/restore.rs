//! Undo: lifting the latest cut. A restore is asked for in the store (so the command line can
//! ask while a host serves the session) and made by the next request: the request then goes out
//! as it would have without that cut (the cut before it, or none), and automatic cuts wait until
//! the request has grown by what a cut normally lets it grow.

use serde::Serialize;

use super::Engine;
use crate::error::Result;
use crate::facts::MsgInfo;
use crate::fingerprint::Fp;
use crate::store::Store;
use crate::trim::{Cut, Lift};

/// What asking for a restore will do, estimated from the last request.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RestorePlan {
    /// Restores now asked for (each lifts one more cut on the next request).
    pub pending: u32,
    /// The cut the next request lifts (its number), or None when no cut is in force.
    pub cut: Option<u32>,
    /// Messages that come back into the request.
    pub messages: usize,
    /// Estimated tokens the next request writes to the prompt cache once, because its prefix
    /// changes where the cut began.
    pub cache_write_tokens: u64,
}

/// A restore made by a request.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Restored {
    /// The cuts lifted, newest first.
    pub cuts: Vec<u32>,
    /// Messages back in the request.
    pub messages: usize,
    /// Estimated tokens this request writes to the prompt cache once.
    pub cache_write_tokens: u64,
    /// Automatic cuts wait until the request reaches this many estimated tokens.
    pub hold_below: u64,
}

/// The cuts one request lifts.
pub(super) struct Lifting {
    /// Indices into the engine's cuts, newest first.
    pub at: Vec<usize>,
    /// Whether restores were asked for (then the request clears the ask, lifted or not).
    pub asked: bool,
}

impl<S: Store> Engine<S> {
    /// Asks for the latest cut in force to be lifted by the next request, in this process or
    /// whichever serves the session next; a manual trim asked for and not yet made is dropped.
    /// Nothing is asked when no cut is in force (`cut` is then None).
    pub fn request_restore(&mut self) -> Result<RestorePlan> {
        let pending = self.store.restores_pending()?;
        let active: Vec<&Cut> = self.cuts.iter().filter(|c| c.lifted.is_none()).collect();
        let Some(at) = active.len().checked_sub(pending as usize + 1) else {
            return Ok(RestorePlan {
                pending,
                cut: None,
                messages: 0,
                cache_write_tokens: 0,
            });
        };
        let (cut, before) = (active[at], at.checked_sub(1).map(|i| active[i]));
        let messages = cut
            .removed_messages
            .saturating_sub(before.map_or(0, |b| b.removed_messages));
        let back = cut
            .removed_tokens
            .saturating_sub(before.map_or(0, |b| b.removed_tokens));
        let now = self.last.as_ref().map_or(0, |l| l.after_tokens);
        let prefix = before.map_or(cut.stable_prefix_tokens, |b| {
            b.stable_prefix_tokens.min(cut.stable_prefix_tokens)
        });
        let seq = cut.seq;
        let pending = self.store.request_restore()?;
        self.manual_pending = false;
        Ok(RestorePlan {
            pending,
            cut: Some(seq),
            messages,
            cache_write_tokens: (now + back).saturating_sub(prefix),
        })
    }

    /// The cuts this request lifts: as many of the newest cuts applying to it as restores were
    /// asked for.
    pub(super) fn lifting(&mut self, fps: &[Fp]) -> Result<Lifting> {
        let pending = self.store.restores_pending()? as usize;
        let at = (0..self.cuts.len())
            .rev()
            .filter(|&i| self.cuts[i].applies_to(fps))
            .take(pending)
            .collect();
        Ok(Lifting {
            at,
            asked: pending > 0,
        })
    }

    /// Automatic cuts are held back: the newest cut was lifted and the request has not yet
    /// grown to where it said they resume.
    pub(super) fn held(&self, out_tokens: u64) -> bool {
        self.cuts
            .last()
            .and_then(|c| c.lifted.as_ref())
            .is_some_and(|l| out_tokens < l.hold_below)
    }
}

/// The lifted cuts as they are stored, with the messages each brings back, and what the restore
/// did. `target` is the cut the request goes out with; `out_tokens` its estimated size.
pub(super) fn lift(
    cuts: &[Cut],
    lifting: &Lifting,
    target: Option<&Cut>,
    fps: &[Fp],
    infos: &[&MsgInfo],
    out_tokens: u64,
    hold_below: u64,
) -> (Vec<(Cut, Vec<Fp>)>, Option<Restored>) {
    let Some(&newest) = lifting.at.first() else {
        return (Vec::new(), None);
    };
    let stays_out = |i: usize| target.is_some_and(|t| i < t.covered && !t.keeps(i));
    let prefix = target.map_or(cuts[newest].stable_prefix_tokens, |t| {
        t.stable_prefix_tokens
            .min(cuts[newest].stable_prefix_tokens)
    });
    let cache_write_tokens = out_tokens.saturating_sub(prefix);
    let mut messages = 0;
    let lifted = lifting
        .at
        .iter()
        .map(|&i| {
            let mut cut = cuts[i].clone();
            let back: Vec<Fp> = (0..cut.covered.min(infos.len()))
                .filter(|&m| !cut.keeps(m) && !stays_out(m))
                .map(|m| fps[m])
                .collect();
            messages = messages.max(back.len());
            cut.lifted = Some(Lift {
                hold_below,
                cache_write_tokens,
            });
            (cut, back)
        })
        .collect();
    let restored = Restored {
        cuts: lifting.at.iter().map(|&i| cuts[i].seq).collect(),
        messages,
        cache_write_tokens,
        hold_below,
    };
    (lifted, Some(restored))
}

/// Where automatic cuts resume after a restore: once the request has grown by what a cut
/// normally lets it grow (from `trim_to_fraction` of the threshold back up to it), counted from
/// the larger of the restored request and the threshold; below the host's own compaction
/// (`usable`: the window less its reserve, 0 when not known) with a 5% margin.
pub(super) fn hold_below(out_tokens: u64, trim_at: u32, trim_to_fraction: f64, usable: u64) -> u64 {
    let trim_at = u64::from(trim_at);
    let growth = ((1.0 - trim_to_fraction) * trim_at as f64) as u64;
    let hold = out_tokens.max(trim_at) + growth;
    if usable == 0 {
        return hold;
    }
    hold.min(usable - usable / 20)
}

/// The notice of a restore.
pub(super) fn restore_notice(r: &Restored, before: u64, after: u64) -> String {
    let k = |t: u64| format!("{:.1}k", t as f64 / 1000.0);
    let cuts: Vec<String> = r.cuts.iter().map(|c| format!("#{c}")).collect();
    format!(
        "smarter-compact: cut {} lifted, {} messages back, request ≈{} → {} tokens; one cache write of ≈{} tokens; \
         automatic trims resume at ≈{} tokens (/smarter-compact:compact trims now)",
        cuts.join(", "),
        r.messages,
        k(before),
        k(after),
        k(r.cache_write_tokens),
        k(r.hold_below)
    )
}
