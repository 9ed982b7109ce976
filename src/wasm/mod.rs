//! The WebAssembly boundary: the only place that knows about JavaScript. It converts and
//! forwards; every decision is made in the core. Errors cross as real JS `Error`s carrying a
//! stable `code`.

mod bank;
#[cfg(feature = "embed")]
mod embed;
mod error;
mod sql;

use std::collections::BTreeMap;

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::config::Config;
use crate::engine::{Engine as CoreEngine, TransformOptions};
use crate::score::{compact_context, Signals};
use crate::store::vectors::DIM;
use crate::store::{check_sql, render_hits, validate_id, Scope, SqlRows, SqlStore, SCHEMA_DOC};
use error::to_js;
use sql::{JsSql, SqliteHost};

type Result<T> = std::result::Result<T, JsValue>;

fn arg(msg: impl Into<String>) -> JsValue {
    to_js(crate::Error::InvalidArgument(msg.into()))
}

/// The engine for one session, as seen from JavaScript.
#[wasm_bindgen]
pub struct Engine {
    inner: CoreEngine<SqlStore<JsSql>>,
}

#[wasm_bindgen]
impl Engine {
    /// Opens the engine for a session over the host's SQLite connection. `options` is JSON:
    /// `{"config": {...}, "env": {"CONTEXT_TRIM_AT_TOKENS": "…", …}, "toml": "…"}`.
    #[wasm_bindgen(constructor)]
    pub fn new(session_id: &str, options: &str, sqlite: SqliteHost) -> Result<Engine> {
        validate_id(session_id).map_err(to_js)?;
        let opts: Value =
            serde_json::from_str(options).map_err(|e| arg(format!("options: {e}")))?;
        let env: BTreeMap<String, String> = opts
            .get("env")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let toml = opts.get("toml").and_then(Value::as_str);
        let config = Config::resolve(&env, toml, opts.get("config").unwrap_or(&Value::Null));
        let store = SqlStore::open(JsSql(sqlite)).map_err(to_js)?;
        let inner = CoreEngine::open(store, config).map_err(to_js)?;
        Ok(Engine { inner })
    }

    /// Rewrites one request: `messages` is the JSON array of wire messages, `options` the JSON
    /// options object. Returns `{"plan": [...], "stats": {...}}` as JSON.
    pub fn transform(&mut self, messages: &str, options: &str) -> Result<String> {
        let opts = TransformOptions::from_json(options).map_err(to_js)?;
        let outcome = self.inner.transform(messages, &opts).map_err(to_js)?;
        Ok(outcome.to_json())
    }

    /// Asks for a trim on the next request.
    #[wasm_bindgen(js_name = compactNow)]
    pub fn compact_now(&mut self) {
        self.inner.compact_now();
    }

    /// Records a request that the host sent unchanged after an error.
    #[wasm_bindgen(js_name = recordFailOpen)]
    pub fn record_fail_open(&mut self, model: &str, now_ms: f64) {
        self.inner.record_fail_open(model, now_ms.max(0.0) as u64);
    }

    /// The session status as JSON.
    pub fn status(&mut self) -> String {
        serde_json::to_string(&self.inner.status()).unwrap_or_else(|_| "{}".into())
    }

    /// `smart_compact_search`: `{"hits", "text", "mode", "coverage"}` as JSON. `scope` is
    /// `trimmed` or `all`; `query_vec` (the query's embedding) makes it hybrid when vectors exist.
    pub fn search(
        &mut self,
        query: &str,
        limit: u32,
        scope: &str,
        query_vec: Option<Vec<f32>>,
    ) -> Result<String> {
        let scope = match scope {
            "trimmed" => Scope::Trimmed,
            "all" => Scope::All,
            other => {
                return Err(arg(format!(
                    "scope must be \"trimmed\" or \"all\", got {other:?}"
                )))
            }
        };
        let found = self
            .inner
            .search(query, limit as usize, scope, query_vec.as_deref())
            .map_err(to_js)?;
        let text = render_hits(query, &found.hits, scope, &found.how());
        Ok(json!({ "hits": found.hits, "mode": found.mode, "coverage": found.coverage, "text": text }).to_string())
    }

    /// Up to `limit` chunks waiting for vectors, as JSON `[{"hash", "text"}]`.
    #[wasm_bindgen(js_name = pendingVectors)]
    pub fn pending_vectors(&mut self, limit: u32) -> Result<String> {
        let p = self.inner.pending_vectors(limit as usize).map_err(to_js)?;
        Ok(serde_json::to_string(&p).unwrap_or_else(|_| "[]".into()))
    }

    /// Stores vectors: `hashes` (JSON array) and their vectors concatenated (n × 384).
    #[wasm_bindgen(js_name = putVectors)]
    pub fn put_vectors(&mut self, hashes: &str, model: &str, flat: &[f32]) -> Result<()> {
        let hashes: Vec<String> =
            serde_json::from_str(hashes).map_err(|e| arg(format!("hashes: {e}")))?;
        if flat.len() != hashes.len() * DIM {
            return Err(arg("one 384-float vector per hash"));
        }
        for (h, v) in hashes.iter().zip(flat.chunks_exact(DIM)) {
            self.inner.put_vector(h, model, v).map_err(to_js)?;
        }
        Ok(())
    }

    /// Uses the memory bank on this SQLite connection for recall on trim.
    #[wasm_bindgen(js_name = attachBank)]
    pub fn attach_bank(&mut self, sqlite: SqliteHost) -> Result<()> {
        let bank = crate::bank::Bank::open(JsSql(sqlite)).map_err(to_js)?;
        self.inner.set_recall(Box::new(bank));
        Ok(())
    }

    /// `smart_compact_get`: a page as JSON `{"page": {...}, "text": "…"}`; 0 means "not given".
    pub fn get(&mut self, id: &str, start_line: u32, end_line: u32) -> Result<String> {
        let opt = |n: u32| (n > 0).then_some(n as usize);
        let page = self
            .inner
            .get(id, opt(start_line), opt(end_line))
            .map_err(to_js)?;
        let text = page.render();
        Ok(json!({ "page": page, "text": text }).to_string())
    }
}

/// Checks a statement for the SQL tool; returns it ready to run read-only, or throws E_SQL_REFUSED.
#[wasm_bindgen(js_name = checkSql)]
pub fn check_sql_js(sql: &str) -> Result<String> {
    check_sql(sql).map_err(to_js)
}

/// Renders the read-only runner's result (`{"columns", "rows", "truncated"}` JSON) for the model.
#[wasm_bindgen(js_name = renderSqlRows)]
pub fn render_sql_rows(result: &str) -> Result<String> {
    let rows: SqlRows =
        serde_json::from_str(result).map_err(|e| arg(format!("SQL result: {e}")))?;
    Ok(rows.render())
}

/// The session database schema as the SQL tool describes it.
#[wasm_bindgen(js_name = schemaDoc)]
pub fn schema_doc() -> String {
    SCHEMA_DOC.to_string()
}

/// Version of the engine (the writer version of rows it stores).
#[wasm_bindgen]
pub fn version() -> String {
    crate::VERSION.to_string()
}

/// Throws E_BAD_ID unless `id` is usable as a session or blob id.
#[wasm_bindgen(js_name = validateId)]
pub fn validate_id_js(id: &str) -> Result<()> {
    validate_id(id).map_err(to_js)
}

/// `compact_context` over `{role, content}` messages (JSON); `signals` is JSON
/// `{"similarity": [..] | null, "coverage": [..] | null}`. Returns `{"kept": [...], "stats": {...}}`.
#[wasm_bindgen(js_name = compactContext)]
pub fn compact_context_js(messages: &str, target_ratio: f64, signals: &str) -> Result<String> {
    let msgs: Vec<Value> = serde_json::from_str(messages)
        .map_err(|e| arg(format!("messages must be a JSON array: {e}")))?;
    let s: Value = serde_json::from_str(signals).map_err(|e| arg(format!("signals: {e}")))?;
    let list = |k: &str| {
        s.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect())
    };
    let signals = Signals {
        similarity: list("similarity"),
        coverage: list("coverage"),
    };
    let c = compact_context(&msgs, target_ratio, &signals).map_err(to_js)?;
    Ok(json!({ "kept": c.kept, "stats": c.stats }).to_string())
}

/// `config.toml` text with `[context_proxy.trim_at]` `pattern = tokens` set; comments kept.
#[wasm_bindgen(js_name = setTrimAt)]
pub fn set_trim_at_js(toml_text: &str, pattern: &str, tokens: f64) -> Result<String> {
    if tokens.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&tokens) {
        return Err(arg(format!(
            "tokens must be a whole number in 1000..=10000000, got {tokens}"
        )));
    }
    crate::config::set_trim_at(toml_text, pattern, tokens as u32).map_err(to_js)
}

/// Estimated tokens of a text (the engine's own estimate), e.g. a host's system prompt.
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(text: &str) -> u32 {
    crate::tokens::estimate_text(text)
}

/// The text `compact_context` scores for each `{role, content}` message (JSON array in and out).
#[wasm_bindgen(js_name = messageTexts)]
pub fn message_texts(messages: &str) -> Result<String> {
    let msgs: Vec<Value> = serde_json::from_str(messages)
        .map_err(|e| arg(format!("messages must be a JSON array: {e}")))?;
    let texts: Vec<String> = msgs.iter().map(crate::score::message_text).collect();
    Ok(serde_json::to_string(&texts).unwrap_or_else(|_| "[]".into()))
}

/// TOML text with the key at `path` (JSON array of names) set to `value` (JSON); comments kept.
#[wasm_bindgen(js_name = tomlSet)]
pub fn toml_set_js(text: &str, path: &str, value: &str) -> Result<String> {
    let path: Vec<String> = serde_json::from_str(path).map_err(|e| arg(format!("path: {e}")))?;
    let value: Value = serde_json::from_str(value).map_err(|e| arg(format!("value: {e}")))?;
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    crate::config::toml_set(text, &path, &value).map_err(to_js)
}

/// TOML text without the key or table at `path` (JSON array of names).
#[wasm_bindgen(js_name = tomlRemove)]
pub fn toml_remove_js(text: &str, path: &str) -> Result<String> {
    let path: Vec<String> = serde_json::from_str(path).map_err(|e| arg(format!("path: {e}")))?;
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    crate::config::toml_remove(text, &path).map_err(to_js)
}
