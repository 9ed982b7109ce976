//! Core errors as JavaScript `Error` objects with a stable `code` property.

use wasm_bindgen::JsValue;

/// A real `Error` (stack, `instanceof Error`) named `SmarterCompactError`, with `code`.
pub fn to_js(e: crate::Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("SmarterCompactError");
    let _ = js_sys::Reflect::set(
        &err,
        &JsValue::from_str("code"),
        &JsValue::from_str(e.code()),
    );
    err.into()
}
