//! Every conversion between JavaScript values and the core's types, in one place. Structured
//! values (options, stats, status, hits, pages) cross as plain JS objects through
//! `serde-wasm-bindgen`; only the message list and the engine's rewrite of it cross as JSON text,
//! because their bytes are what the prompt cache sees.
// The TOML-edit build (no `engine-api`) uses only the error conversions.
#![cfg_attr(not(feature = "engine-api"), allow(dead_code))]

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::config::{Config, ConfigFile, ENV_KEYS};
use crate::error::ERROR_CODES;
use crate::format::Format;
use crate::store::{vectors::DIM, MAX_HITS, MAX_ID_LEN, MAX_ROWS, PAGE_LINES};

pub type Result<T> = std::result::Result<T, JsValue>;

/// The TypeScript types of every value crossing this boundary (options, stats, status, hits,
/// pages, constants, error codes), declared once in `types.d.ts` and emitted by wasm-bindgen into
/// `pkg/smarter_compact.d.ts`; `tests/ts_types.rs` checks them against the core's serialisation.
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");

/// A core error as a real JS `Error` named `SmarterCompactError`, with its stable `code`.
pub fn error(e: crate::Error) -> JsValue {
    coded(e.code(), &e.to_string())
}

/// An `E_ARG` error for a value the caller passed.
pub fn arg(msg: impl Into<String>) -> JsValue {
    error(crate::Error::InvalidArgument(msg.into()))
}

fn coded(code: &str, message: &str) -> JsValue {
    let err = js_sys::Error::new(message);
    err.set_name("SmarterCompactError");
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(code));
    err.into()
}

/// A Rust value as a plain JS value: maps become objects, 64-bit integers numbers.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| error(crate::Error::InvalidArgument(format!("result: {e}"))))
}

/// A JS value as a Rust value; `what` names it in the `E_ARG` error.
pub fn from_js<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T> {
    serde_wasm_bindgen::from_value(value).map_err(|e| arg(format!("{what}: {e}")))
}

/// A whole-number argument from JS (`start_line`, `limit`): 0 means "not given"; anything else
/// must be an integer from 1 to `u32::MAX`, checked here because wasm-bindgen's own `u32`
/// conversion wraps (2^32 would arrive as 0, 2^32 + 3 as 3).
pub fn count_arg(value: f64, what: &str) -> Result<Option<usize>> {
    if value == 0.0 {
        return Ok(None);
    }
    if !(value.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&value)) {
        return Err(arg(format!(
            "{what} must be an integer from 1 to {}, got {value}",
            u32::MAX
        )));
    }
    Ok(Some(value as usize))
}

/// A JS value as JSON (`undefined` and `null` become `null`).
pub fn json(value: JsValue, what: &str) -> Result<Value> {
    if value.is_undefined() || value.is_null() {
        return Ok(Value::Null);
    }
    from_js(value, what)
}

/// How `origins` and warnings name the user's `config.toml` and the project's file.
const USER_CONFIG: &str = "config.toml";
const PROJECT_CONFIG: &str = ".smarter-compact.toml";

/// What configures an engine: `{config?: {...}, env?: {NAME: "value"}, toml?: "config.toml
/// text", projectToml?: "the project's .smarter-compact.toml text"}`.
/// Values of `env` that are not strings are ignored, like unset variables.
pub fn config(options: JsValue) -> Result<Config> {
    let opts = json(options, "options")?;
    if !(opts.is_object() || opts.is_null()) {
        return Err(arg("options must be an object"));
    }
    let env: BTreeMap<String, String> = opts
        .get("env")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default();
    // The user's file, then the project's over it.
    let files: Vec<ConfigFile> = [("toml", USER_CONFIG), ("projectToml", PROJECT_CONFIG)]
        .into_iter()
        .filter_map(|(key, label)| {
            let text = opts.get(key).and_then(Value::as_str)?;
            Some(ConfigFile { label, text })
        })
        .collect();
    Ok(Config::resolve_files(
        &env,
        &files,
        opts.get("config").unwrap_or(&Value::Null),
    ))
}

/// The contracts JS must agree on, read from the core instead of repeated.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Constants {
    version: &'static str,
    formats: [&'static str; 5],
    error_codes: [&'static str; 13],
    env_keys: [&'static str; ENV_KEYS.len()],
    vector_dim: usize,
    max_search_hits: usize,
    max_sql_rows: usize,
    max_id_len: usize,
    page_lines: usize,
}

/// The constants object.
pub fn constants() -> Result<JsValue> {
    to_js(&Constants {
        version: crate::VERSION,
        formats: Format::NAMES,
        error_codes: ERROR_CODES,
        env_keys: ENV_KEYS,
        vector_dim: DIM,
        max_search_hits: MAX_HITS,
        max_sql_rows: MAX_ROWS,
        max_id_len: MAX_ID_LEN,
        page_lines: PAGE_LINES,
    })
}

thread_local! {
    /// The message of the last panic, kept for the host: a panic aborts as a wasm trap, which
    /// carries no message of its own.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Keeps each panic's message and location for [`take_panic`].
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
    }));
}

/// The last panic's message, once.
pub fn take_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}
