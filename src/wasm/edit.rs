//! TOML edits that keep the user's comments and layout, as seen from JavaScript: the CLI's
//! `context set` and `enable|disable codex` (feature `edit`, a build of its own: the engine the
//! hosts load has no TOML editor).

use wasm_bindgen::prelude::*;

use super::convert::{error, json, Result};

/// `config.toml` text with `[context_proxy.trim_at]` `pattern = value` set (whole tokens like
/// `"120000"` or a share of the window like `"60%"`); comments kept.
#[wasm_bindgen(js_name = setTrimAt)]
pub fn set_trim_at_js(toml_text: &str, pattern: &str, value: &str) -> Result<String> {
    crate::config::set_trim_at(toml_text, pattern, value).map_err(error)
}

/// TOML text with the key at `path` set to `value`; comments kept.
#[wasm_bindgen(js_name = tomlSet)]
pub fn toml_set_js(text: &str, path: Vec<String>, value: JsValue) -> Result<String> {
    let value = json(value, "value")?;
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    crate::config::toml_set(text, &path, &value).map_err(error)
}

/// TOML text without the key or table at `path`.
#[wasm_bindgen(js_name = tomlRemove)]
pub fn toml_remove_js(text: &str, path: Vec<String>) -> Result<String> {
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    crate::config::toml_remove(text, &path).map_err(error)
}
