//! The recall tools on an engine whose store is SQLite: search, get, and the vectors behind
//! hybrid search. (The SQL tool's guard and
//! rendering live in [`crate::store`]; the host runs the checked query on a read-only
//! connection with a deadline.)

use super::Engine;
use crate::error::Result;
use crate::store::vectors::{self, Coverage, Pending};
use crate::store::{
    get, hybrid_search, search, Found, Page, Scope, Sql, SqlStore, Store, EMBEDDINGS_SINCE,
};

impl<S: Sql> Engine<SqlStore<S>> {
    /// `smart_compact_search`: the best `limit` hits for `query` in `scope`, hybrid when the
    /// host gives the query's vector and vectors exist, full-text otherwise.
    pub fn search(
        &mut self,
        query: &str,
        limit: usize,
        scope: Scope,
        query_vec: Option<&[f32]>,
    ) -> Result<Found> {
        if self.store.schema_version() < EMBEDDINGS_SINCE {
            // An older store read as it is: no embeddings, full-text only.
            let hits = search(self.store.db(), query, limit, scope)?;
            return Ok(Found {
                hits,
                mode: "fts",
                coverage: Coverage::default(),
                reason: None,
            });
        }
        hybrid_search(self.store.db(), query, limit, scope, query_vec)
    }

    /// Chunks waiting for the host's embedder (none on a read-only store: nothing could be
    /// written back, nor on an older store without embeddings).
    pub fn pending_vectors(&mut self, limit: usize) -> Result<Vec<Pending>> {
        if self.store.is_read_only() || self.store.schema_version() < EMBEDDINGS_SINCE {
            return Ok(Vec::new());
        }
        vectors::pending(self.store.db(), limit)
    }

    /// Stores a chunk's vector computed by the host's embedder; E_READONLY on a read-only store.
    pub fn put_vector(&mut self, hash: &str, model: &str, vec: &[f32]) -> Result<()> {
        vectors::put(self.store.db_for_write()?, hash, model, vec)
    }

    /// `smart_compact_get`: a page of the full text of a compressed output or a message, or
    /// of its lines that contain `grep`.
    pub fn get(
        &mut self,
        id: &str,
        start_line: Option<usize>,
        end_line: Option<usize>,
        grep: Option<&str>,
    ) -> Result<Page> {
        get(self.store.db(), id, start_line, end_line, grep)
    }
}
