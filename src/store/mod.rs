//! The session store seen from the engine: a trait, so the engine runs the same over the
//! in-memory store (tests, no persistence) and over SQLite through the host's shim.

mod fence;
mod get;
mod guard;
mod hybrid;
mod ids;
mod in_memory;
mod schema;
mod search;
mod sql;
mod sqlite;
pub mod vectors;

pub use fence::{defuse, FENCE_CLOSE, FENCE_OPEN};
pub use get::{get, Page, GREP_LINE_BYTES, GREP_MAX_BYTES, PAGE_BYTES, PAGE_LINES};
pub use guard::{check_sql, SqlRows, MAX_ROWS};
pub use hybrid::{hybrid_search, Found};
pub use ids::{validate_id, MAX_ID_LEN};
pub use in_memory::MemStore;
pub use schema::{migrate, readable_version, EMBEDDINGS_SINCE, SCHEMA_DOC, SCHEMA_VERSION};
pub use search::{
    bm25, index_terms, match_expr, render_hits, search, snippet, Hit, Scope, MAX_HITS,
};
pub use sql::{scalar, transaction, Sql, SqlValue};
pub use sqlite::SqlStore;

use std::collections::HashMap;

use crate::error::Result;
use crate::facts::{Blob, MsgInfo, NewMessage};
use crate::fingerprint::Fp;
use crate::trim::Cut;

/// One request as recorded for `context_status` and the session report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestRecord {
    /// Model name the host gave.
    pub model: String,
    /// Host clock, milliseconds since the epoch (0 if unknown).
    pub at_ms: u64,
    /// Messages in the request as received.
    pub history_len: usize,
    /// Chained fingerprint of its last message.
    pub last_fp: Option<Fp>,
    /// The cut applied (0: none).
    pub cut_seq: u32,
    /// Estimated tokens as received.
    pub before_tokens: u64,
    /// Estimated tokens as sent.
    pub after_tokens: u64,
    /// A new cut was made on this request.
    pub trimmed: bool,
    /// Parts compressed on this request.
    pub compressed: u32,
    /// The request starts with the previous rewritten request byte for byte.
    pub prefix_reused: bool,
    /// Still over the threshold after trimming as far as the rules allow.
    pub over_limit: bool,
    /// The request went out unchanged because of an error.
    pub fail_open: bool,
}

/// Totals over all recorded requests.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Usage {
    /// Requests seen.
    pub requests: u64,
    /// Sum of estimated tokens as received.
    pub before_tokens: u64,
    /// Sum of estimated tokens as sent.
    pub after_tokens: u64,
    /// Requests that reused the previous request as their prefix.
    pub prefix_reused: u64,
    /// Parts compressed.
    pub compressed: u64,
    /// Requests over the threshold after trimming.
    pub over_limit: u64,
    /// Requests that went out unchanged because of an error.
    pub fail_opens: u64,
}

impl Usage {
    /// Adds one request.
    pub fn add(&mut self, r: &RequestRecord) {
        self.requests += 1;
        self.before_tokens += r.before_tokens;
        self.after_tokens += r.after_tokens;
        self.prefix_reused += r.prefix_reused as u64;
        self.compressed += u64::from(r.compressed);
        self.over_limit += r.over_limit as u64;
        self.fail_opens += r.fail_open as u64;
    }
}

/// What a store holds about a session when it is opened.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Facts about every stored message.
    pub messages: Vec<MsgInfo>,
    /// Every cut made, oldest first.
    pub cuts: Vec<Cut>,
    /// Totals over recorded requests.
    pub usage: Usage,
    /// The last recorded request that was not a fail-open.
    pub last_request: Option<RequestRecord>,
}

/// Everything one request writes, committed at once.
#[derive(Debug, Clone, Copy)]
pub struct RequestWrite<'a> {
    /// Messages seen for the first time.
    pub messages: &'a [NewMessage<'a>],
    /// Full texts of newly compressed parts.
    pub blobs: &'a [Blob],
    /// A new cut, with the fingerprints of the messages it takes out of the context.
    pub cut: Option<(&'a Cut, &'a [Fp])>,
    /// Cuts lifted on this request (marked lifted, their messages back in the context), with
    /// the fingerprints of the messages they bring back.
    pub lifted: &'a [(&'a Cut, Vec<Fp>)],
    /// The restores asked for were served: the request for them is cleared.
    pub restores_served: bool,
    /// The request itself.
    pub request: &'a RequestRecord,
}

impl<'a> RequestWrite<'a> {
    /// A write of only a request record (nothing new, no cut).
    pub fn request_only(request: &'a RequestRecord) -> Self {
        RequestWrite {
            messages: &[],
            blobs: &[],
            cut: None,
            lifted: &[],
            restores_served: false,
            request,
        }
    }
}

/// Persistence for one session.
pub trait Store {
    /// Reads everything the engine keeps in memory about the session.
    fn load(&mut self) -> Result<Loaded>;
    /// Writes one request atomically: all of it or nothing.
    fn commit(&mut self, write: &RequestWrite) -> Result<()>;
    /// The full text of a compressed tool result.
    fn blob(&mut self, id: &str) -> Result<Option<Blob>>;
    /// What the store holds, for status.
    fn counts(&mut self) -> Result<StoreCounts>;
    /// How many cuts the next request is asked to lift (by this process or another one, such as
    /// the command line), 0 when none.
    fn restores_pending(&mut self) -> Result<u32>;
    /// Asks the next request to lift one more cut; returns how many are now asked for.
    fn request_restore(&mut self) -> Result<u32>;
    /// The message number of each of these messages (what `smart_compact_get` takes): the one
    /// it has in the store, or for a message not stored yet the number it gets when the
    /// request is committed (the next free numbers, in order).
    fn message_numbers(&mut self, fps: &[Fp]) -> Result<Vec<u64>>;
    /// The JSON text each of these messages was stored with, `None` for one the store does not
    /// hold; in the order of `fps`.
    fn message_texts(&mut self, fps: &[Fp]) -> Result<Vec<Option<String>>>;
    /// Whether every write is refused (a store opened only to be read).
    fn is_read_only(&self) -> bool {
        false
    }
}

/// Numbers for `fps`: the stored one when known, else the next after `max`, in order.
fn number_messages(stored: &HashMap<Fp, u64>, max: u64, fps: &[Fp]) -> Vec<u64> {
    let mut next = max;
    let mut fresh: HashMap<Fp, u64> = HashMap::new();
    fps.iter()
        .map(|fp| match stored.get(fp) {
            Some(&n) => n,
            None => *fresh.entry(*fp).or_insert_with(|| {
                next += 1;
                next
            }),
        })
        .collect()
}

/// What a store holds.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StoreCounts {
    /// Messages stored.
    pub messages: u64,
    /// Messages still in the model's context.
    pub in_context: u64,
    /// Full texts of compressed outputs.
    pub blobs: u64,
    /// Engine versions that wrote the stored messages, with their row counts.
    pub writers: Vec<(String, u64)>,
}
