//! The WebAssembly boundary: the only place that knows about JavaScript. It converts and
//! forwards; every decision is made in the core. Errors cross as real JS `Error`s carrying a
//! stable `code`.

mod error;

use std::collections::BTreeMap;

use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::config::Config;
use crate::engine::{Engine as CoreEngine, TransformOptions};
use crate::store::{validate_id, MemStore};
use error::to_js;

/// The engine for one session, as seen from JavaScript.
#[wasm_bindgen]
pub struct Engine {
    inner: CoreEngine<MemStore>,
}

#[wasm_bindgen]
impl Engine {
    /// Opens the engine for a session. `options` is JSON:
    /// `{"config": {...}, "env": {"CONTEXT_TRIM_AT_TOKENS": "…", …}, "toml": "…"}`.
    #[wasm_bindgen(constructor)]
    pub fn new(session_id: &str, options: &str) -> Result<Engine, JsValue> {
        validate_id(session_id).map_err(to_js)?;
        let opts: Value = serde_json::from_str(options)
            .map_err(|e| to_js(crate::Error::InvalidArgument(format!("options: {e}"))))?;
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
        let inner = CoreEngine::open(MemStore::default(), config).map_err(to_js)?;
        Ok(Engine { inner })
    }

    /// Rewrites one request: `messages` is the JSON array of wire messages, `options` the JSON
    /// options object. Returns `{"plan": [...], "stats": {...}}` as JSON.
    pub fn transform(&mut self, messages: &str, options: &str) -> Result<String, JsValue> {
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
    pub fn status(&self) -> String {
        serde_json::to_string(&self.inner.status()).unwrap_or_else(|_| "{}".into())
    }
}

/// Version of the engine (the writer version of rows it stores).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
