//! The one host capability the store needs: an open SQLite database. Hosts implement it over
//! their own SQLite (bun:sqlite, node:sqlite, better-sqlite3, sql.js); tests over rusqlite.

use crate::error::{Error, Result};

/// A value crossing the host boundary.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    /// NULL.
    Null,
    /// INTEGER.
    Int(i64),
    /// REAL.
    Real(f64),
    /// TEXT.
    Text(String),
    /// BLOB.
    Blob(Vec<u8>),
}

impl SqlValue {
    /// The value as an integer (REAL truncated, TEXT parsed), 0 otherwise.
    pub fn as_i64(&self) -> i64 {
        match self {
            SqlValue::Int(i) => *i,
            SqlValue::Real(f) => *f as i64,
            SqlValue::Text(t) => t.trim().parse().unwrap_or(0),
            _ => 0,
        }
    }

    /// The value as text (numbers formatted, NULL and BLOB empty).
    pub fn as_text(&self) -> String {
        match self {
            SqlValue::Text(t) => t.clone(),
            SqlValue::Int(i) => i.to_string(),
            SqlValue::Real(f) => f.to_string(),
            SqlValue::Null | SqlValue::Blob(_) => String::new(),
        }
    }

    /// The value as bytes (BLOB as is, TEXT as UTF-8).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            SqlValue::Blob(b) => b,
            SqlValue::Text(t) => t.as_bytes(),
            _ => &[],
        }
    }
}

impl From<&str> for SqlValue {
    fn from(s: &str) -> Self {
        SqlValue::Text(s.to_string())
    }
}

impl From<String> for SqlValue {
    fn from(s: String) -> Self {
        SqlValue::Text(s)
    }
}

impl From<i64> for SqlValue {
    fn from(i: i64) -> Self {
        SqlValue::Int(i)
    }
}

impl From<Option<&str>> for SqlValue {
    fn from(s: Option<&str>) -> Self {
        s.map_or(SqlValue::Null, SqlValue::from)
    }
}

/// An open SQLite database provided by the host.
///
/// Some hosts bind every JavaScript number as REAL (better-sqlite3), so SQL that needs an
/// INTEGER parameter (an FTS docid, a LIMIT) casts it: `CAST(? AS INTEGER)`.
pub trait Sql {
    /// Runs one statement that returns no rows (DDL, INSERT, UPDATE, BEGIN, COMMIT).
    fn exec(&mut self, sql: &str, params: &[SqlValue]) -> Result<()>;
    /// Runs one query; each row holds its values in column order.
    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>>;
}

/// Runs `f` in one write transaction: all of it is committed, or none of it.
pub fn transaction<S: Sql + ?Sized, T>(
    db: &mut S,
    f: impl FnOnce(&mut S) -> Result<T>,
) -> Result<T> {
    db.exec("BEGIN IMMEDIATE", &[])?;
    match f(db) {
        Ok(v) => match db.exec("COMMIT", &[]) {
            Ok(()) => Ok(v),
            Err(e) => {
                let _ = db.exec("ROLLBACK", &[]);
                Err(e)
            }
        },
        Err(e) => {
            let _ = db.exec("ROLLBACK", &[]);
            Err(e)
        }
    }
}

/// The single value of a one-row, one-column query.
pub fn scalar<S: Sql + ?Sized>(db: &mut S, sql: &str, params: &[SqlValue]) -> Result<SqlValue> {
    db.query(sql, params)?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .ok_or_else(|| Error::Store(format!("no row from {sql}")))
}
