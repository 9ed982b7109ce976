//! The recall tools on an engine whose store is SQLite: search and get. (The SQL tool's guard and
//! rendering live in [`crate::store`]; the host runs the checked query on a read-only
//! connection with a deadline.)

use super::Engine;
use crate::error::Result;
use crate::store::{get, search, Hit, Page, Scope, Sql, SqlStore};

impl<S: Sql> Engine<SqlStore<S>> {
    /// `smart_compact_search`: the best `limit` hits for `query` in `scope`.
    pub fn search(&mut self, query: &str, limit: usize, scope: Scope) -> Result<Vec<Hit>> {
        search(self.store.db(), query, limit, scope)
    }

    /// `smart_compact_get`: a page of the full text of a compressed output or a message.
    pub fn get(
        &mut self,
        id: &str,
        start_line: Option<usize>,
        end_line: Option<usize>,
    ) -> Result<Page> {
        get(self.store.db(), id, start_line, end_line)
    }
}
