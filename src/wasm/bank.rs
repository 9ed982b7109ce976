//! The memory bank as seen from JavaScript.

use wasm_bindgen::prelude::*;

use super::convert::{arg, error, to_js};
use super::sql::{JsSql, SqliteHost};
use crate::memory::bank::{episode_text, Bank};
use crate::store::vectors::DIM;

type Result<T> = std::result::Result<T, JsValue>;

/// A memory bank (`banks/<name>.db`) over the host's SQLite connection.
#[wasm_bindgen]
pub struct MemoryBank {
    inner: Bank<JsSql>,
}

#[wasm_bindgen]
impl MemoryBank {
    /// Opens the bank, creating its schema.
    #[wasm_bindgen(constructor)]
    pub fn new(sqlite: SqliteHost) -> Result<MemoryBank> {
        Ok(MemoryBank {
            inner: Bank::open(JsSql(sqlite)).map_err(error)?,
        })
    }

    /// Adds a memory; returns its id, or -1 when the same text is already there.
    pub fn add(&mut self, kind: &str, text: &str, source: &str, now_ms: f64) -> Result<f64> {
        let id = self
            .inner
            .add(kind, text, source, now_ms.max(0.0) as u64)
            .map_err(error)?;
        Ok(id.map_or(-1.0, |i| i as f64))
    }

    /// Up to `limit` memories waiting for a vector: `[[id, text], …]`.
    #[wasm_bindgen(unchecked_return_type = "[number, string][]")]
    pub fn pending(&mut self, limit: u32) -> Result<JsValue> {
        to_js(&self.inner.pending(limit as usize).map_err(error)?)
    }

    /// Stores a memory's vector.
    pub fn put(&mut self, id: f64, vec: &[f32]) -> Result<()> {
        self.inner.put(id as i64, vec).map_err(error)
    }

    /// `memory_coverage` of each vector in `flat` (n × 384 concatenated).
    pub fn coverage(&mut self, flat: &[f32]) -> Result<Vec<f64>> {
        if flat.len() % DIM != 0 {
            return Err(arg("vectors must be 384 floats each"));
        }
        let vecs: Vec<Vec<f32>> = flat.chunks_exact(DIM).map(<[f32]>::to_vec).collect();
        self.inner.coverage(&vecs).map_err(error)
    }

    /// Memories in the bank.
    pub fn count(&mut self) -> Result<f64> {
        Ok(self.inner.len().map_err(error)? as f64)
    }
}

/// The episode memory recorded for a trim.
#[wasm_bindgen(js_name = episodeText)]
pub fn episode_text_js(session: &str, before: f64, after: f64, removed_messages: u32) -> String {
    episode_text(
        session,
        before.max(0.0) as u64,
        after.max(0.0) as u64,
        removed_messages as usize,
    )
}
