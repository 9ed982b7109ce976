//! The store's host capability implemented natively over rusqlite (bundled SQLite with FTS4),
//! plus the read-only runner of the SQL tool with a progress-handler deadline.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::types::{Value as RValue, ValueRef};
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use smarter_compact::store::{check_sql, Sql, SqlRows, SqlValue, MAX_ROWS};
use smarter_compact::Error;

/// A read-write connection to a session database file.
pub struct NativeSql(pub Connection);

impl NativeSql {
    pub fn open(path: &Path) -> NativeSql {
        let c = Connection::open(path).expect("open db");
        c.busy_timeout(Duration::from_secs(5))
            .expect("busy timeout");
        c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .expect("wal");
        NativeSql(c)
    }

    /// A read-only connection to an existing database file, as the hosts' shims open one for a
    /// reader: never creates the file, never writes it.
    pub fn open_readonly(path: &Path) -> rusqlite::Result<NativeSql> {
        let c = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        c.busy_timeout(Duration::from_secs(5))?;
        Ok(NativeSql(c))
    }
}

fn to_sql(p: &SqlValue) -> RValue {
    match p {
        SqlValue::Null => RValue::Null,
        SqlValue::Int(i) => RValue::Integer(*i),
        SqlValue::Real(f) => RValue::Real(*f),
        SqlValue::Text(t) => RValue::Text(t.clone()),
        SqlValue::Blob(b) => RValue::Blob(b.clone()),
    }
}

fn from_sql(v: ValueRef) -> SqlValue {
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Int(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
    }
}

fn store_err(e: rusqlite::Error) -> Error {
    Error::Store(e.to_string())
}

impl Sql for NativeSql {
    fn exec(&mut self, sql: &str, params: &[SqlValue]) -> smarter_compact::Result<()> {
        let mut st = self.0.prepare_cached(sql).map_err(store_err)?;
        let params: Vec<RValue> = params.iter().map(to_sql).collect();
        let mut rows = st
            .query(rusqlite::params_from_iter(params))
            .map_err(store_err)?;
        while rows.next().map_err(store_err)?.is_some() {}
        Ok(())
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[SqlValue],
    ) -> smarter_compact::Result<Vec<Vec<SqlValue>>> {
        let mut st = self.0.prepare_cached(sql).map_err(store_err)?;
        let n = st.column_count();
        let params: Vec<RValue> = params.iter().map(to_sql).collect();
        let mut rows = st
            .query(rusqlite::params_from_iter(params))
            .map_err(store_err)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(store_err)? {
            out.push(
                (0..n)
                    .map(|i| from_sql(r.get_ref(i).expect("column")))
                    .collect(),
            );
        }
        Ok(out)
    }
}

/// Runs the SQL tool's query on a read-only connection: guard first, `query_only`, a deadline
/// enforced by the progress handler, a length limit, and the row cap.
pub fn run_readonly(
    path: &Path,
    sql: &str,
    deadline: Duration,
) -> smarter_compact::Result<SqlRows> {
    let stmt = check_sql(sql)?;
    let c = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::Sql(e.to_string()))?;
    c.busy_timeout(Duration::from_secs(2))
        .map_err(|e| Error::Sql(e.to_string()))?;
    c.query_row("PRAGMA query_only = 1", [], |_| Ok(())).ok();
    c.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, 10_000_000)
        .map_err(|e| Error::Sql(e.to_string()))?;
    let start = Instant::now();
    c.progress_handler(10_000, Some(move || start.elapsed() > deadline));
    let fail = |e: rusqlite::Error| {
        if matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::OperationInterrupted)
        ) {
            Error::Sql(format!(
                "the query ran longer than {} ms and was stopped",
                deadline.as_millis()
            ))
        } else {
            Error::Sql(e.to_string())
        }
    };
    let mut st = c.prepare(&stmt).map_err(fail)?;
    if !st.readonly() {
        return Err(Error::SqlRefused("the statement would write".into()));
    }
    let columns: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let mut rows = st.query([]).map_err(fail)?;
    let mut out = Vec::new();
    let mut truncated = false;
    while let Some(r) = rows.next().map_err(fail)? {
        if out.len() == MAX_ROWS {
            truncated = true;
            break;
        }
        out.push(
            (0..columns.len())
                .map(|i| match r.get_ref(i).expect("column") {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(i) => Value::from(i),
                    ValueRef::Real(f) => Value::from(f),
                    ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::from(format!("<blob {} bytes>", b.len())),
                })
                .collect(),
        );
    }
    Ok(SqlRows {
        columns,
        rows: out,
        truncated,
    })
}
