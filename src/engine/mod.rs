//! One request end to end: fingerprint → read and store new messages (compressing large tool
//! results at first sight) → re-apply the sticky cut or plan a new one → edit plan + stats.

mod cached;
mod digest;
mod history;
mod known;
mod output;
mod read;
mod regret;
mod restore;
mod status;
mod supersede;
mod texts;
mod tools;

use std::collections::HashMap;

use serde_json::value::RawValue;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::facts::Blob;
use crate::fingerprint::Fp;
use crate::format::Format;
use crate::memory::recall::{recall_block, Recall, MAX_MEMORIES};
use crate::rewrite::{OutPlan, Rewrite};
use crate::store::{RequestRecord, RequestWrite, Store, Usage};
use crate::trim::{plan, Cut, PlanParams};

use history::History;
use texts::Texts;

pub use cached::Seen;
pub use restore::{RestorePlan, Restored};
pub use status::{Stats, Status};

/// How the host describes one request.
#[derive(Debug, Clone)]
pub struct TransformOptions {
    /// Wire format of the messages.
    pub format: Format,
    /// Model name, for the per-model threshold.
    pub model: String,
    /// Tokens outside the messages (system prompt, tool definitions) when the host knows them.
    pub overhead_tokens: u32,
    /// The model's context window in tokens when the host knows it (0: not known); built-in
    /// thresholds are capped at a share of it and `"60%"` thresholds are taken of it.
    pub context_window: u32,
    /// Tokens the host keeps free below the window (its own compaction fires above
    /// window − reserve); 0 when it has none or does not say.
    pub reserve_tokens: u32,
    /// The prompt cache's lifetime the request asked for, in milliseconds (e.g. an hour for
    /// Anthropic's long TTL); 0: the configured lifetime for the model.
    pub cache_ttl_ms: u64,
    /// Host clock in milliseconds since the epoch: recorded, and compared with the previous
    /// request's to tell when the prompt cache has gone cold (0: not known, never cold).
    pub now_ms: u64,
}

/// The result of one request: how to rewrite it, and what happened.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The rewritten request over the caller's items.
    pub rewrite: Rewrite,
    /// What happened.
    pub stats: Stats,
}

/// The engine for one session.
pub struct Engine<S: Store> {
    store: S,
    config: Config,
    /// Every message seen, by chained fingerprint.
    known: known::Known,
    /// Tool name of every call seen, by call id.
    call_names: HashMap<String, String>,
    /// Cuts, oldest first.
    cuts: Vec<Cut>,
    usage: Usage,
    last: Option<RequestRecord>,
    /// A manual trim was asked for and not yet made.
    manual_pending: bool,
    /// Fail-opens the store could not record.
    unrecorded_fail_opens: u64,
    cache: output::Cache,
    /// The memory bank cuts write to and, when recall is on, consult; with the session its
    /// memories are attributed to.
    recall: Option<(Box<dyn Recall>, String)>,
    /// The fingerprints of the last cached request's messages, by the caller's ids.
    seen: Seen,
    /// The call keys the cut in force removed (for trim regret).
    removed_keys: regret::RemovedKeys,
}

impl<S: Store> Engine<S> {
    /// Opens the engine over a store, loading what the store holds about the session.
    pub fn open(mut store: S, config: Config) -> Result<Self> {
        let loaded = store.load()?;
        let mut call_names = HashMap::new();
        for m in &loaded.messages {
            for (id, name) in &m.calls {
                call_names.insert(id.clone(), name.clone());
            }
        }
        let known = known::Known::new(loaded.messages);
        let mut cuts = loaded.cuts;
        for c in &mut cuts {
            // The plan looks a message's superseded results up by index (a stable sort: a
            // no-op on what this engine writes).
            c.superseded.sort_by_key(|s| s.at);
        }
        Ok(Engine {
            store,
            config,
            known,
            call_names,
            cuts,
            usage: loaded.usage,
            last: loaded.last_request,
            manual_pending: false,
            unrecorded_fail_opens: 0,
            cache: output::Cache::default(),
            recall: None,
            seen: Seen::default(),
            removed_keys: regret::RemovedKeys::default(),
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the store refuses writes (opened read-only).
    pub fn is_read_only(&self) -> bool {
        self.store.is_read_only()
    }

    /// The store, e.g. for search and SQL.
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Sets the memory bank of this engine's session `session`: every cut writes its memories
    /// there (see [`crate::memory::from_cut`]), and when `compaction_recall` is on a cut recalls
    /// the memories of other sessions relevant to the last user turn.
    pub fn set_recall(&mut self, recall: Box<dyn Recall>, session: &str) {
        self.recall = Some((recall, session.to_string()));
    }

    /// Asks for a trim on the next request, whatever its size.
    pub fn compact_now(&mut self) {
        self.manual_pending = true;
    }

    /// The full text of a compressed tool result.
    pub fn blob(&mut self, id: &str) -> Result<Option<Blob>> {
        self.store.blob(id)
    }

    /// Rewrites one request: a JSON array of messages (or host items) in `opts.format`.
    /// E_READONLY on a store opened read-only: every request is recorded.
    pub fn transform(&mut self, request_json: &str, opts: &TransformOptions) -> Result<Outcome> {
        if self.store.is_read_only() {
            return Err(Error::ReadOnly(
                "cannot rewrite a request: the session store was opened read-only".into(),
            ));
        }
        let raws: Vec<&RawValue> = serde_json::from_str(request_json).map_err(|e| {
            Error::Json(format!("the request must be a JSON array of messages: {e}"))
        })?;
        let Some(host) = opts.format.host() else {
            let texts: Vec<&str> = raws.iter().map(|r| r.get()).collect();
            let (plan, stats) = self.transform_texts(&texts, opts)?;
            return Ok(Outcome {
                rewrite: plan.rewrite(),
                stats,
            });
        };
        let items = raws
            .iter()
            .enumerate()
            .map(|(i, r)| crate::format::parse_message(r.get(), i))
            .collect::<Result<Vec<_>>>()?;
        let canon = host.read(&items)?;
        let texts: Vec<String> = canon.iter().map(|c| c.message.to_string()).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (plan, mut stats) = self.transform_texts(&refs, opts)?;
        let rewrite = crate::format::host::host_rewrite(host, &plan, &canon, &items);
        stats.messages_before = items.len();
        stats.messages_after = rewrite.len();
        Ok(Outcome { rewrite, stats })
    }

    /// Rewrites one request given as canonical messages (JSON texts in the canonical wire format
    /// of `opts.format`): the plan over those messages and what happened.
    fn transform_texts(
        &mut self,
        raws: &[&str],
        opts: &TransformOptions,
    ) -> Result<(OutPlan, Stats)> {
        let texts: Vec<Option<&str>> = raws.iter().copied().map(Some).collect();
        let fps = cached::chain(raws);
        self.transform_canonical(&texts, &fps, opts, &|_| true)?
            .ok_or_else(|| Error::Store("every message text was given, yet one was missing".into()))
    }

    /// Rewrites one request of canonical messages with chained fingerprints `fps`, of which
    /// `texts` holds the JSON texts the caller gave (`None`: an unchanged message whose text was
    /// not sent again). `Ok(None)` when the request needs a text it was not given: the new
    /// messages, every message when a new cut is planned, and the messages whose edited form
    /// this process has not built yet, or a plan `accept` refuses (its caller cannot carry it
    /// out without the texts it did not send); nothing is changed or recorded then.
    fn transform_canonical(
        &mut self,
        texts: &[Option<&str>],
        fps: &[Fp],
        opts: &TransformOptions,
        accept: &dyn Fn(&OutPlan) -> bool,
    ) -> Result<Option<(OutPlan, Stats)>> {
        let lifting = self.lifting(fps)?;
        // Fingerprints are chained and every message of a request is recorded, so a known
        // fingerprint means its whole history is known: the new messages are a suffix, found
        // from the end. Should a message before the last known one be missing after all, the
        // new messages start there.
        let (mut infos, known_at) = self.known.prefix(fps);
        let first_new = infos.len();
        if texts[first_new..].iter().any(Option::is_none) {
            return Ok(None);
        }
        let all_texts = texts.iter().all(Option::is_some);
        // Only read where a text was given: the new messages, or a new cut once all are there.
        let raws: Vec<&str> = texts.iter().map(|t| t.unwrap_or("")).collect();
        let (raws, fps) = (raws.as_slice(), fps);
        let adapter = opts.format.adapter();
        let window = self.config.window_for(&opts.model, opts.context_window);
        let trim_at = self
            .config
            .trim_at_for(&opts.model, window, opts.reserve_tokens);
        let prev = infos.last().copied();
        let mut fresh = read::read_new(self, raws, fps, (first_new, prev), opts.format, trim_at)?;
        let n = raws.len();
        let current = (0..self.cuts.len())
            .rev()
            .find(|i| !lifting.at.contains(i) && self.cuts[*i].applies_to(fps))
            .map(|i| &self.cuts[i]);
        if let Some(c) = current {
            regret::mark(
                &mut self.removed_keys,
                &mut fresh.messages,
                first_new,
                c,
                |i| &infos[i].call_keys[..],
            );
        }
        infos.extend(fresh.messages.iter().map(|m| &m.info));

        let overhead = u64::from(opts.overhead_tokens);
        let before_tokens = infos.iter().map(|m| u64::from(m.tokens)).sum::<u64>() + overhead;
        let mut out_tokens = output::sent_tokens(&infos, current) + overhead;
        let usable = u64::from(window.saturating_sub(opts.reserve_tokens));
        let hold = restore::hold_below(out_tokens, trim_at, self.config.trim_to_fraction, usable);
        let (lifted, restored) =
            restore::lift(&self.cuts, &lifting, current, fps, &infos, out_tokens, hold);
        let lifted_from = lifting
            .at
            .first()
            .map(|&i| output::sent_tokens(&infos, Some(&self.cuts[i])) + overhead);
        let held = match lifted.first() {
            Some((c, _)) => c.lifted.as_ref().is_some_and(|l| out_tokens < l.hold_below),
            None => self.held(out_tokens),
        };
        let min_free = (self.config.min_free_fraction * f64::from(trim_at)) as u64;
        let over = out_tokens >= u64::from(trim_at);
        let cold = !held
            && self.cache_cold(opts)
            && out_tokens as f64 > self.config.trim_to_fraction * f64::from(trim_at);
        // A restore asked for is served instead of a manual trim.
        let manual_pending = self.manual_pending && !lifting.asked;
        let mut new_cut = None;
        if manual_pending || cold || (!held && over) {
            // A manual trim plans as if the request had just reached the threshold.
            let plan_at = if manual_pending {
                trim_at.min(u32::try_from(out_tokens).unwrap_or(u32::MAX))
            } else {
                trim_at
            };
            let params = PlanParams {
                trim_at: plan_at,
                trim_to_fraction: self.config.trim_to_fraction,
                keep_last_exchanges: self.config.keep_last_exchanges,
                overhead_tokens: opts.overhead_tokens,
                digest_tokens: digest::reserve(&self.config, plan_at),
            };
            if let Some(p) = plan(&infos, &params) {
                // Loop guard: a trim that cannot reach the threshold and frees little is not
                // worth a cache miss; the request goes out as it is, over the limit. A
                // cache-cold cut costs no cache hit but must still free something worth it.
                let manual = manual_pending;
                let worth = |after: u64| {
                    let frees = out_tokens.saturating_sub(after);
                    frees > 0
                        && (manual || (over && after <= u64::from(trim_at)) || frees >= min_free)
                };
                let planned_after = p.after_tokens;
                let seq = self.cuts.last().map_or(1, |c| c.seq + 1);
                let mut cut = p.into_cut(seq, fps, manual);
                // The cut's supersession, digest and recall read the messages it covers; those
                // not sent come back from the store.
                let history = match History::read(
                    &mut self.store,
                    (&Texts::new(texts, fps), &infos),
                    fps,
                    &cut,
                    adapter,
                ) {
                    Ok(h) => h,
                    Err(_) if !all_texts => return Ok(None),
                    Err(e) => return Err(e),
                };
                // What the new cut supersedes counts towards what it frees, as the size of the
                // request under the cut in force counts what that one supersedes.
                let saved = supersede::add_supersession(
                    &self.config,
                    &mut cut,
                    &history,
                    &infos,
                    opts.overhead_tokens,
                );
                let after = planned_after.saturating_sub(saved);
                if worth(after) {
                    out_tokens = after;
                    cut.cache_cold = cold && !manual_pending;
                    let learn = self.recall.as_mut().map(|(bank, session)| digest::Learn {
                        bank: bank.as_mut(),
                        session,
                        now_ms: opts.now_ms,
                    });
                    out_tokens += digest::add_digest(
                        (&self.config, learn),
                        &mut cut,
                        &history,
                        &infos,
                        plan_at,
                    );
                    out_tokens += add_recall(&self.config, &mut self.recall, &mut cut, &history);
                    new_cut = Some(cut);
                }
            }
        }
        let over_limit = out_tokens > u64::from(trim_at);
        let cut = new_cut.as_ref().or(current);
        // The messages the plan edits and the caller did not send come back from the store.
        let mut read: Vec<(usize, String)> = Vec::new();
        if !all_texts {
            let missing = output::missing_texts(&self.cache, texts, fps, &infos, cut);
            let got = Texts::new(texts, fps).each(&mut self.store, missing, |i, t| {
                read.push((i, t.to_string()));
                Ok(())
            });
            if got.is_err() {
                return Ok(None);
            }
        }
        let mut filled: Vec<&str> = Vec::new();
        if !read.is_empty() {
            filled.extend_from_slice(raws);
            for (i, t) in &read {
                filled[*i] = t;
            }
        }
        let raws = if read.is_empty() { raws } else { &filled[..] };
        let plan = output::build(&mut self.cache, raws, fps, &infos, cut, adapter)?;
        if !all_texts && !accept(&plan) {
            return Ok(None);
        }
        if lifting.asked {
            self.manual_pending = false;
        }
        let cut_seq = cut.map_or(0, |c| c.seq);
        let trimmed = new_cut.is_some();
        let prefix_reused = !trimmed
            && self.last.as_ref().is_some_and(|l| {
                l.cut_seq == cut_seq
                    && l.history_len <= n
                    && l.last_fp
                        .is_some_and(|f| fps.get(l.history_len.wrapping_sub(1)) == Some(&f))
            });
        let record = RequestRecord {
            model: opts.model.clone(),
            at_ms: opts.now_ms,
            history_len: n,
            last_fp: fps.last().copied(),
            cut_seq,
            before_tokens,
            after_tokens: out_tokens,
            trimmed,
            compressed: fresh.blobs.len() as u32,
            prefix_reused,
            over_limit,
            fail_open: false,
        };
        let removed: Vec<Fp> = new_cut
            .as_ref()
            .map(|c| {
                (0..c.covered)
                    .filter(|&i| !c.keeps(i))
                    .map(|i| fps[i])
                    .collect()
            })
            .unwrap_or_default();
        let lifted_refs: Vec<(&Cut, Vec<Fp>)> =
            lifted.iter().map(|(c, back)| (c, back.clone())).collect();
        let stats = Stats {
            before_tokens,
            after_tokens: out_tokens,
            trimmed,
            compressed: fresh.blobs.len(),
            fail_open: false,
            messages_before: n,
            messages_after: plan.len(),
            trim_at,
            context_window: window,
            over_limit,
            prefix_reused,
            cut: cut_seq,
            removed_messages: cut.map_or(0, |c| c.removed_messages),
            digest_tokens: cut.map_or(0, |c| c.digest_tokens),
            superseded_messages: cut.map_or(0, Cut::superseded_messages),
            superseded_tokens: cut.map_or(0, Cut::superseded_tokens),
            cache_cold: new_cut.as_ref().is_some_and(|c| c.cache_cold),
            warnings: self.config.warnings.clone(),
            notice: self
                .config
                .notify
                .then(|| match (&new_cut, &restored) {
                    (Some(c), _) => Some(status::cut_notice(
                        c.removed_messages,
                        before_tokens,
                        out_tokens,
                        fresh.blobs.len(),
                        c.cache_cold,
                    )),
                    (None, Some(r)) => Some(restore::restore_notice(
                        r,
                        lifted_from.unwrap_or(out_tokens),
                        out_tokens,
                    )),
                    (None, None) => None,
                })
                .flatten(),
            restored: restored.clone(),
        };
        drop(infos);
        self.store.commit(&RequestWrite {
            messages: &fresh.messages,
            blobs: &fresh.blobs,
            cut: new_cut.as_ref().map(|c| (c, removed.as_slice())),
            lifted: &lifted_refs,
            restores_served: lifting.asked,
            request: &record,
        })?;
        for (&i, (cut, _)) in lifting.at.iter().zip(lifted) {
            self.cuts[i] = cut;
        }
        // Memory follows the store only once the store has it.
        for m in fresh.messages {
            for (id, name) in &m.info.calls {
                self.call_names.insert(id.clone(), name.clone());
            }
            self.known.insert(m.info);
        }
        self.known.remember(known_at, &fps[first_new..]);
        if let Some(c) = new_cut {
            self.manual_pending = false;
            self.cuts.push(c);
        }
        self.usage.add(&record);
        self.last = Some(record);
        Ok(Some((plan, stats)))
    }

    /// The prompt cache has gone cold: the previous request was longer ago than the cache's
    /// lifetime for this model (both clocks known).
    fn cache_cold(&self, opts: &TransformOptions) -> bool {
        let ttl = self.config.cache_ttl_ms_for(&opts.model, opts.cache_ttl_ms);
        let Some(last) = self.last.as_ref().filter(|l| l.at_ms > 0) else {
            return false;
        };
        ttl > 0 && opts.now_ms > last.at_ms && opts.now_ms - last.at_ms > ttl
    }

    /// Records a request that went out unchanged because of an error (the host calls this after
    /// a fail-open); counted in memory when the store cannot record it either.
    pub fn record_fail_open(&mut self, model: &str, now_ms: u64) {
        let record = RequestRecord {
            model: model.to_string(),
            at_ms: now_ms,
            fail_open: true,
            ..RequestRecord::default()
        };
        match self.store.commit(&RequestWrite::request_only(&record)) {
            Ok(()) => self.usage.add(&record),
            Err(_) => self.unrecorded_fail_opens += 1,
        }
    }
}

impl TransformOptions {
    /// Reads the options object of the public API: `{"format": one of [`Format::NAMES`],
    /// "model": "…", "overheadTokens": n, "contextWindow": n, "reserveTokens": n,
    /// "cacheTtlMs": n, "nowMs": n}`.
    pub fn from_value(v: &serde_json::Value) -> Result<TransformOptions> {
        if !v.is_object() {
            return Err(Error::InvalidArgument("options must be an object".into()));
        }
        let format = match v.get("format") {
            None | Some(serde_json::Value::Null) => Format::OpenAi,
            Some(serde_json::Value::String(s)) => Format::parse(s)?,
            Some(_) => return Err(Error::InvalidArgument("format must be a string".into())),
        };
        let model = match v.get("model") {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(_) => return Err(Error::InvalidArgument("model must be a string".into())),
        };
        let number = |key: &str| -> Result<u64> {
            match v.get(key) {
                None | Some(serde_json::Value::Null) => Ok(0),
                Some(n) => n
                    .as_f64()
                    .filter(|f| *f >= 0.0 && f.is_finite())
                    .map(|f| f as u64)
                    .ok_or_else(|| {
                        Error::InvalidArgument(format!("{key} must be a non-negative number"))
                    }),
            }
        };
        Ok(TransformOptions {
            format,
            model,
            overhead_tokens: u32::try_from(number("overheadTokens")?).unwrap_or(u32::MAX),
            context_window: u32::try_from(number("contextWindow")?).unwrap_or(u32::MAX),
            reserve_tokens: u32::try_from(number("reserveTokens")?).unwrap_or(u32::MAX),
            cache_ttl_ms: number("cacheTtlMs")?,
            now_ms: number("nowMs")?,
        })
    }
}

impl Outcome {
    /// `{"rewrite": [...], "stats": {...}}` for the JavaScript side.
    pub fn to_json(&self) -> String {
        let stats = serde_json::to_string(&self.stats).unwrap_or_else(|_| "{}".into());
        format!(
            "{{\"rewrite\":{},\"stats\":{stats}}}",
            self.rewrite.to_json()
        )
    }
}

/// Appends the recall block to a new cut's pointer; returns its estimated tokens. A bank that
/// fails or has nothing adds nothing: recall never fails a request. The session's own memories
/// are left out: what it taught the bank is in its digest, its request or its store.
fn add_recall(
    config: &Config,
    recall: &mut Option<(Box<dyn Recall>, String)>,
    cut: &mut Cut,
    history: &History,
) -> u64 {
    let (true, Some((bank, session)), Some(at)) =
        (config.compaction_recall, recall.as_mut(), cut.pointer_at)
    else {
        return 0;
    };
    let query = history
        .views
        .get(at)
        .and_then(Option::as_ref)
        .map(|m| m.plain_text())
        .unwrap_or_default();
    let found = bank.recall_elsewhere(&query, MAX_MEMORIES, session);
    let block = recall_block(&found.unwrap_or_default());
    if block.is_empty() {
        return 0;
    }
    cut.pointer = format!("{}\n{block}", cut.pointer);
    u64::from(crate::tokens::estimate_text(&block)) + 1
}
