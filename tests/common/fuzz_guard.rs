//! The property of the fuzz target `guard`, shared with `tests/fuzz_regressions.rs`: any statement
//! the SQL tool's guard lets through is, by SQLite's own parse of it (on a store with the real
//! schema), one read-only statement (`sqlite3_stmt_readonly`) with nothing after it.
#![allow(dead_code)]

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::{Value as RValue, ValueRef};
use rusqlite::{Batch, Connection};
use smarter_compact::store::{check_sql, migrate, Sql, SqlValue};
use smarter_compact::{Error, Result};

/// Just enough of the host capability over rusqlite to create the store's schema.
struct Schema<'a>(&'a Connection);

fn params(p: &[SqlValue]) -> Vec<RValue> {
    p.iter()
        .map(|v| match v {
            SqlValue::Null => RValue::Null,
            SqlValue::Int(i) => RValue::Integer(*i),
            SqlValue::Real(f) => RValue::Real(*f),
            SqlValue::Text(t) => RValue::Text(t.clone()),
            SqlValue::Blob(b) => RValue::Blob(b.clone()),
        })
        .collect()
}

impl Sql for Schema<'_> {
    fn exec(&mut self, sql: &str, p: &[SqlValue]) -> Result<()> {
        let mut st = self
            .0
            .prepare(sql)
            .map_err(|e| Error::Store(e.to_string()))?;
        st.execute(rusqlite::params_from_iter(params(p)))
            .map(|_| ())
            .or_else(|e| match e {
                rusqlite::Error::ExecuteReturnedResults => Ok(()),
                e => Err(Error::Store(e.to_string())),
            })
    }

    fn query(&mut self, sql: &str, p: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let mut st = self
            .0
            .prepare(sql)
            .map_err(|e| Error::Store(e.to_string()))?;
        let n = st.column_count();
        let rows = st
            .query_map(rusqlite::params_from_iter(params(p)), |r| {
                Ok((0..n)
                    .map(|i| match r.get_ref(i).expect("column") {
                        ValueRef::Null => SqlValue::Null,
                        ValueRef::Integer(i) => SqlValue::Int(i),
                        ValueRef::Real(f) => SqlValue::Real(f),
                        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into()),
                        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
                    })
                    .collect())
            })
            .map_err(|e| Error::Store(e.to_string()))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| Error::Store(e.to_string()))
    }
}

thread_local! {
    /// An in-memory store with the current schema, made once per thread.
    static STORE: Connection = {
        let c = Connection::open_in_memory().expect("in-memory SQLite");
        migrate(&mut Schema(&c)).expect("the store's schema");
        c
    };
}

/// Pieces of SQL the token mode strings together: keywords that write, functions the guard
/// refuses, every way of quoting a name, comments, separators and NUL.
const PIECES: [&str; 80] = [
    "SELECT ",
    "WITH ",
    "VALUES ",
    "(",
    ")",
    ",",
    ";",
    " ",
    "\n",
    "--c\n",
    "/*c*/",
    "'s'",
    "\"",
    "'",
    "`",
    "[",
    "]",
    "\"zeroblob\"",
    "zeroblob",
    "load_extension",
    "randomblob",
    "readfile",
    "writefile",
    "printf",
    "replace",
    "REPLACE ",
    "INSERT ",
    "INTO ",
    "DELETE ",
    "UPDATE ",
    "DROP ",
    "CREATE ",
    "ATTACH ",
    "PRAGMA ",
    "BEGIN ",
    "FROM ",
    "messages ",
    "WHERE ",
    "x",
    "1",
    "*",
    "=",
    "AS ",
    "RECURSIVE ",
    "UNION ALL ",
    "RETURNING ",
    "TABLE ",
    "TEMP ",
    "VIEW ",
    "TRIGGER ",
    "EXPLAIN ",
    "QUERY PLAN ",
    "count(*)",
    "\0",
    "$",
    "?",
    ":a",
    "@a",
    "x'00'",
    "ON CONFLICT ",
    "DO ",
    "NOTHING ",
    "SET ",
    "DEFAULT ",
    "ANALYZE ",
    "VACUUM ",
    "REINDEX ",
    "SAVEPOINT ",
    "RELEASE ",
    "END ",
    "COMMIT ",
    "ROLLBACK ",
    "output_lines ",
    "text ",
    "seq ",
    "LIMIT ",
    "ORDER BY ",
    "OVER ",
    "[x]",
    "`y`",
];

/// The statement an input stands for: its bytes as UTF-8 (lossily), or, after a first byte
/// 0xFF, one piece of [`PIECES`] per byte (so the fuzzer reaches well-formed SQL quickly).
pub fn statement(data: &[u8]) -> String {
    match data.split_first() {
        Some((0xFF, rest)) => rest
            .iter()
            .map(|b| PIECES[*b as usize % PIECES.len()])
            .collect(),
        _ => String::from_utf8_lossy(data).into_owned(),
    }
}

/// Checks the property on the statement `data` stands for; returns whether the guard let it
/// through.
pub fn guard(data: &[u8]) -> bool {
    let sql = statement(data);
    let Ok(body) = check_sql(&sql) else {
        return false;
    };
    STORE.with(|c| {
        let mut batch = Batch::new(c, &body);
        match batch.next() {
            // SQLite cannot run it (a syntax error, an unknown table): nothing is run.
            Err(_) => {}
            Ok(None) => panic!("the guard allowed a statement SQLite reads as none: {body:?}"),
            Ok(Some(st)) => {
                assert!(
                    st.readonly(),
                    "the guard allowed a writing statement: {body:?}"
                );
                drop(st);
                assert!(
                    matches!(batch.next(), Ok(None)),
                    "the guard allowed something after the first statement: {body:?}"
                );
            }
        };
    });
    true
}
