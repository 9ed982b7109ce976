//! The SQLite shim the host passes in: a JS object with `exec(sql, params)` and
//! `query(sql, params) → rows` (arrays of values). Every call is `catch`: a JS exception becomes
//! a store error, never an unwinding through Rust frames.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, Result};
use crate::store::{Sql, SqlValue};

#[wasm_bindgen]
extern "C" {
    /// The host's SQLite connection (declared as `SqliteHost` in `types.d.ts`).
    #[wasm_bindgen(typescript_type = "SqliteHost")]
    pub type SqliteHost;

    #[wasm_bindgen(method, catch)]
    fn exec(this: &SqliteHost, sql: &str, params: &Array) -> std::result::Result<(), JsValue>;

    #[wasm_bindgen(method, catch)]
    fn query(this: &SqliteHost, sql: &str, params: &Array)
        -> std::result::Result<JsValue, JsValue>;
}

/// The core's [`Sql`] over the host's shim.
pub struct JsSql(pub SqliteHost);

fn params(values: &[SqlValue]) -> Array {
    values
        .iter()
        .map(|v| match v {
            SqlValue::Null => JsValue::NULL,
            SqlValue::Int(i) => JsValue::from_f64(*i as f64),
            SqlValue::Real(f) => JsValue::from_f64(*f),
            SqlValue::Text(t) => JsValue::from_str(t),
            SqlValue::Blob(b) => Uint8Array::from(b.as_slice()).into(),
        })
        .collect()
}

fn value(v: JsValue) -> SqlValue {
    if v.is_null() || v.is_undefined() {
        SqlValue::Null
    } else if let Some(f) = v.as_f64() {
        if f.fract() == 0.0 && f.abs() < 9.0e15 {
            SqlValue::Int(f as i64)
        } else {
            SqlValue::Real(f)
        }
    } else if let Some(s) = v.as_string() {
        SqlValue::Text(s)
    } else if let Some(b) = v.as_bool() {
        SqlValue::Int(b as i64)
    } else if v.is_bigint() {
        SqlValue::Int(i64::try_from(js_sys::BigInt::unchecked_from_js(v)).unwrap_or(i64::MAX))
    } else if let Some(bytes) = v.dyn_ref::<Uint8Array>() {
        SqlValue::Blob(bytes.to_vec())
    } else {
        SqlValue::Null
    }
}

fn store_error(e: JsValue) -> Error {
    let msg = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the SQLite shim threw".into());
    Error::Store(msg)
}

impl Sql for JsSql {
    fn exec(&mut self, sql: &str, p: &[SqlValue]) -> Result<()> {
        self.0.exec(sql, &params(p)).map_err(store_error)
    }

    fn query(&mut self, sql: &str, p: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let rows = self.0.query(sql, &params(p)).map_err(store_error)?;
        let rows: Array = rows.dyn_into().map_err(|_| {
            Error::Store("the SQLite shim's query must return an array of rows".into())
        })?;
        rows.iter()
            .map(|row| {
                row.dyn_into::<Array>()
                    .map(|r| r.iter().map(value).collect())
                    .map_err(|_| Error::Store("each row must be an array of values".into()))
            })
            .collect()
    }
}
