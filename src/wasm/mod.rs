//! The WebAssembly boundary: the only place that knows about JavaScript. It converts and
//! forwards; every decision is made in the core. Errors cross as real JS `Error`s carrying a
//! stable `code`. The engine's API is feature `engine-api` (on by default); the CLI's TOML-edit
//! build has only feature `edit` (src/wasm/edit.rs).

#[cfg(feature = "engine-api")]
mod bank;
mod convert;
#[cfg(feature = "edit")]
mod edit;
#[cfg(feature = "embed")]
mod embed;
#[cfg(feature = "engine-api")]
mod sql;

use wasm_bindgen::prelude::*;

#[cfg(feature = "engine-api")]
use crate::engine::{Engine as CoreEngine, TransformOptions};
#[cfg(feature = "engine-api")]
use crate::memory::compact_context::{compact_context, Signals};
#[cfg(feature = "engine-api")]
use crate::store::vectors::DIM;
#[cfg(feature = "engine-api")]
use crate::store::{check_sql, render_hits, validate_id, Scope, SqlRows, SqlStore, SCHEMA_DOC};
#[cfg(feature = "engine-api")]
use convert::{arg, count_arg, error, from_js, json, to_js, Result};
#[cfg(feature = "engine-api")]
use serde_json::Value;
#[cfg(feature = "engine-api")]
use sql::{JsSql, SqliteHost};

/// Keeps panic messages for [`take_panic`]; runs when the module is instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    convert::install_panic_hook();
}

/// The message of the panic that made the last call trap, once (`undefined` when none).
#[wasm_bindgen(js_name = takePanic)]
pub fn take_panic() -> Option<String> {
    convert::take_panic()
}

/// The contracts shared with JavaScript: formats, error codes, environment keys, limits.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(unchecked_return_type = "Constants")]
pub fn constants() -> Result<JsValue> {
    convert::constants()
}

/// The configuration an engine would run with, from the same options as [`Engine::new`],
/// without opening a store.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = resolveConfig, unchecked_return_type = "EngineConfig")]
pub fn resolve_config(
    #[wasm_bindgen(unchecked_param_type = "EngineOptions")] options: JsValue,
) -> Result<JsValue> {
    to_js(&convert::config(options)?)
}

/// The engine for one session, as seen from JavaScript.
#[cfg(feature = "engine-api")]
#[wasm_bindgen]
pub struct Engine {
    inner: CoreEngine<SqlStore<JsSql>>,
    /// The session id, which the memories its cuts write to a bank are attributed to.
    session: String,
    /// The texts of the next `transformCached` call's fresh messages, staged one by one.
    staged: Vec<String>,
}

#[cfg(feature = "engine-api")]
impl Engine {
    /// Checks the id and options, then opens the store with `open` (read-write or read-only).
    fn open_with(
        session_id: &str,
        options: JsValue,
        sqlite: SqliteHost,
        open: fn(JsSql) -> crate::Result<SqlStore<JsSql>>,
    ) -> Result<Engine> {
        validate_id(session_id).map_err(error)?;
        let config = convert::config(options)?;
        let store = open(JsSql(sqlite)).map_err(error)?;
        let inner = CoreEngine::open(store, config).map_err(error)?;
        Ok(Engine {
            inner,
            session: session_id.to_string(),
            staged: Vec::new(),
        })
    }
}

#[cfg(feature = "engine-api")]
#[wasm_bindgen]
impl Engine {
    /// Opens the engine for a session over the host's SQLite connection.
    #[wasm_bindgen(constructor)]
    pub fn new(
        session_id: &str,
        #[wasm_bindgen(unchecked_param_type = "EngineOptions")] options: JsValue,
        sqlite: SqliteHost,
    ) -> Result<Engine> {
        Engine::open_with(session_id, options, sqlite, SqlStore::open)
    }

    /// Opens the engine over an existing session store to read it only: no schema is created
    /// or migrated, and every write (`transform`, `putVectors`) throws E_READONLY. A database
    /// without a session store throws E_NO_SESSION.
    #[wasm_bindgen(js_name = openReadonly)]
    pub fn open_readonly(
        session_id: &str,
        #[wasm_bindgen(unchecked_param_type = "EngineOptions")] options: JsValue,
        sqlite: SqliteHost,
    ) -> Result<Engine> {
        Engine::open_with(session_id, options, sqlite, SqlStore::open_readonly)
    }

    /// Rewrites one request: `messages` is the JSON text of the wire messages. Returns JSON text
    /// `{"rewrite": [[start, end] | {"from": [..], "items": [..]}], "stats": {...}}`.
    pub fn transform(
        &mut self,
        messages: &str,
        #[wasm_bindgen(unchecked_param_type = "RequestOptions")] options: JsValue,
    ) -> Result<String> {
        let opts = TransformOptions::from_value(&json(options, "options")?).map_err(error)?;
        let outcome = self.inner.transform(messages, &opts).map_err(error)?;
        Ok(outcome.to_json())
    }

    /// Stages the JSON text of the next `transformCached` call's next fresh message. A text per
    /// message rather than one of all of them: a host that passes a long history at once makes
    /// only short-lived strings, and the engine's memory holds no text as long as all of them.
    #[wasm_bindgen(js_name = pushText)]
    pub fn push_text(&mut self, text: String) {
        self.staged.push(text);
    }

    /// Drops the texts staged so far (when a staging stops half way: `transformCached` takes
    /// the staged texts, so a request's staging otherwise starts from none).
    #[wasm_bindgen(js_name = clearTexts)]
    pub fn clear_texts(&mut self) {
        self.staged = Vec::new();
    }

    /// Rewrites one request of the `openai`, `anthropic`, `opencode` or `pi` format given by
    /// message ids: `ids[i]` names message (or host item) `i` (the caller's own numbering: the
    /// same id for a message it knows unchanged since the previous call, a new one otherwise);
    /// `fresh[i]` is 1 when its JSON text was staged (`pushText`, in order of places). Takes
    /// the staged texts, whatever the outcome. Returns the JSON text [`Engine::transform`]
    /// returns for the full request, or `undefined` when the engine needs a text it was not
    /// sent: the caller calls again with every text.
    #[wasm_bindgen(js_name = transformCached)]
    pub fn transform_cached(
        &mut self,
        ids: &[u32],
        fresh: &[u8],
        #[wasm_bindgen(unchecked_param_type = "RequestOptions")] options: JsValue,
    ) -> Result<Option<String>> {
        let staged = std::mem::take(&mut self.staged);
        let opts = TransformOptions::from_value(&json(options, "options")?).map_err(error)?;
        if fresh.len() != ids.len() || fresh.iter().filter(|&&f| f != 0).count() != staged.len() {
            return Err(arg(
                "one fresh flag per id, and one staged text per fresh flag",
            ));
        }
        let mut given = staged.iter();
        let texts: Vec<Option<&str>> = fresh
            .iter()
            .map(|&f| (f != 0).then(|| given.next().map(String::as_str)).flatten())
            .collect();
        let outcome = self
            .inner
            .transform_cached(ids, &texts, &opts)
            .map_err(error)?;
        Ok(outcome.map(|o| o.to_json()))
    }

    /// Asks for a trim on the next request.
    #[wasm_bindgen(js_name = compactNow)]
    pub fn compact_now(&mut self) {
        self.inner.compact_now();
    }

    /// Asks for the latest cut to be lifted by the next request (whichever process serves it);
    /// returns what that will do.
    #[wasm_bindgen(js_name = requestRestore, unchecked_return_type = "RestorePlan")]
    pub fn request_restore(&mut self) -> Result<JsValue> {
        to_js(&self.inner.request_restore().map_err(error)?)
    }

    /// Records a request that the host sent unchanged after an error.
    #[wasm_bindgen(js_name = recordFailOpen)]
    pub fn record_fail_open(&mut self, model: &str, now_ms: f64) {
        self.inner.record_fail_open(model, now_ms.max(0.0) as u64);
    }

    /// The session status.
    #[wasm_bindgen(unchecked_return_type = "Status")]
    pub fn status(&mut self) -> Result<JsValue> {
        to_js(&self.inner.status())
    }

    /// The configuration in force.
    #[wasm_bindgen(unchecked_return_type = "EngineConfig")]
    pub fn config(&self) -> Result<JsValue> {
        to_js(self.inner.config())
    }

    /// `smart_compact_search`: `{hits, text, mode, coverage, reason}`. `scope` is `trimmed` or
    /// `all`; `query_vec` (the query's embedding) makes it hybrid when vectors exist; without it,
    /// `fts_reason` says why the host searched full-text only (e.g. its embedder was busy).
    #[wasm_bindgen(unchecked_return_type = "SearchResult")]
    pub fn search(
        &mut self,
        query: &str,
        limit: f64,
        scope: &str,
        query_vec: Option<Vec<f32>>,
        fts_reason: Option<String>,
    ) -> Result<JsValue> {
        let scope = match scope {
            "trimmed" => Scope::Trimmed,
            "all" => Scope::All,
            other => {
                return Err(arg(format!(
                    "scope must be \"trimmed\" or \"all\", got {other:?}"
                )))
            }
        };
        let mut found = self
            .inner
            .search(
                query,
                count_arg(limit, "limit")?.unwrap_or(0),
                scope,
                query_vec.as_deref(),
            )
            .map_err(error)?;
        if found.mode == "fts" && found.reason.is_none() {
            found.reason = fts_reason.filter(|r| !r.is_empty());
        }
        let text = render_hits(query, &found.hits, scope, &found.how());
        to_js(
            &serde_json::json!({ "hits": found.hits, "mode": found.mode, "coverage": found.coverage, "reason": found.reason, "text": text }),
        )
    }

    /// Up to `limit` chunks waiting for vectors: `[{hash, text}]`.
    #[wasm_bindgen(js_name = pendingVectors, unchecked_return_type = "PendingVector[]")]
    pub fn pending_vectors(&mut self, limit: u32) -> Result<JsValue> {
        to_js(&self.inner.pending_vectors(limit as usize).map_err(error)?)
    }

    /// Stores vectors: one hash per vector, the vectors concatenated (n × 384).
    #[wasm_bindgen(js_name = putVectors)]
    pub fn put_vectors(&mut self, hashes: Vec<String>, model: &str, flat: &[f32]) -> Result<()> {
        if flat.len() != hashes.len() * DIM {
            return Err(arg("one 384-float vector per hash"));
        }
        for (h, v) in hashes.iter().zip(flat.chunks_exact(DIM)) {
            self.inner.put_vector(h, model, v).map_err(error)?;
        }
        Ok(())
    }

    /// Uses the memory bank on this SQLite connection: every cut writes its memories there,
    /// and recall on trim reads the other sessions' memories from it.
    #[wasm_bindgen(js_name = attachBank)]
    pub fn attach_bank(&mut self, sqlite: SqliteHost) -> Result<()> {
        let bank = crate::memory::bank::Bank::open(JsSql(sqlite)).map_err(error)?;
        self.inner.set_recall(Box::new(bank), &self.session);
        Ok(())
    }

    /// `smart_compact_get`: `{page, text}`; 0 and "" mean "not given".
    #[wasm_bindgen(unchecked_return_type = "GetResult")]
    pub fn get(&mut self, id: &str, start_line: f64, end_line: f64, grep: &str) -> Result<JsValue> {
        let page = self
            .inner
            .get(
                id,
                count_arg(start_line, "start_line")?,
                count_arg(end_line, "end_line")?,
                Some(grep).filter(|g| !g.is_empty()),
            )
            .map_err(error)?;
        let text = page.render();
        to_js(&serde_json::json!({ "page": page, "text": text }))
    }
}

/// Checks a statement for the SQL tool; returns it ready to run read-only, or throws E_SQL_REFUSED.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = checkSql)]
pub fn check_sql_js(sql: &str) -> Result<String> {
    check_sql(sql).map_err(error)
}

/// Renders the read-only runner's result `{columns, rows, truncated}` for the model.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = renderSqlRows)]
pub fn render_sql_rows(
    #[wasm_bindgen(unchecked_param_type = "SqlRows")] result: JsValue,
) -> Result<String> {
    let rows: SqlRows = from_js(result, "SQL result")?;
    Ok(rows.render())
}

/// The session database schema as the SQL tool describes it.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = schemaDoc)]
pub fn schema_doc() -> String {
    SCHEMA_DOC.to_string()
}

/// Version of the engine (the writer version of rows it stores).
#[cfg(feature = "engine-api")]
#[wasm_bindgen]
pub fn version() -> String {
    crate::VERSION.to_string()
}

/// Throws E_BAD_ID unless `id` is usable as a session or blob id.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = validateId)]
pub fn validate_id_js(id: &str) -> Result<()> {
    validate_id(id).map_err(error)
}

/// `compact_context` over `{role, content}` messages; `signals` is
/// `{similarity?: number[] | null, coverage?: number[] | null}`. Returns `{kept, stats}`.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = compactContext, unchecked_return_type = "CompactContextResult")]
pub fn compact_context_js(
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] messages: JsValue,
    target_ratio: f64,
    #[wasm_bindgen(unchecked_param_type = "Signals | null | undefined")] signals: JsValue,
) -> Result<JsValue> {
    let msgs: Vec<Value> = from_js(messages, "messages must be an array")?;
    let s = json(signals, "signals")?;
    let list = |k: &str| {
        s.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect())
    };
    let signals = Signals {
        similarity: list("similarity"),
        coverage: list("coverage"),
    };
    let c = compact_context(&msgs, target_ratio, &signals).map_err(error)?;
    to_js(&serde_json::json!({ "kept": c.kept, "stats": c.stats }))
}

/// Estimated tokens of a text (the engine's own estimate), e.g. a host's system prompt.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(text: &str) -> u32 {
    crate::tokens::estimate_text(text)
}

/// The text `compact_context` scores for each `{role, content}` message.
#[cfg(feature = "engine-api")]
#[wasm_bindgen(js_name = messageTexts)]
pub fn message_texts(
    #[wasm_bindgen(unchecked_param_type = "unknown[]")] messages: JsValue,
) -> Result<Vec<String>> {
    let msgs: Vec<Value> = from_js(messages, "messages must be an array")?;
    crate::memory::compact_context::check_count(msgs.len()).map_err(error)?;
    Ok(msgs
        .iter()
        .map(crate::memory::compact_context::message_text)
        .collect())
}

/// Panics with `message`: lets the tests check that a panic's message reaches the host's `Error`
/// and that the host replaces the aborted instance. Never called by the package itself.
#[cfg(feature = "engine-api")]
#[doc(hidden)]
#[wasm_bindgen(js_name = __panicForTests)]
pub fn panic_for_tests(message: &str) {
    panic!("{message}");
}
