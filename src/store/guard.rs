//! The SQL tool's guard and its output. The guard lets through one read-only query (SELECT,
//! WITH … SELECT, VALUES) and nothing that writes, attaches, changes pragmas or loads code; the
//! host then runs it on a read-only connection with a deadline and row cap. Results are capped in
//! rows and bytes, and the cut is said.

use serde::Deserialize;
use serde_json::Value;

use super::search::{defuse, FENCE_CLOSE, FENCE_OPEN};
use crate::error::{Error, Result};

/// Longest statement accepted.
pub const MAX_SQL_BYTES: usize = 10_000;
/// Most rows returned.
pub const MAX_ROWS: usize = 200;
/// Most bytes of rendered output.
pub const MAX_OUTPUT_BYTES: usize = 16_000;
/// Longest value shown in a cell.
const MAX_CELL_BYTES: usize = 1_000;

/// Keywords that never appear in a read-only query.
const FORBIDDEN: [&str; 18] = [
    "INSERT",
    "UPDATE",
    "DELETE",
    "CREATE",
    "DROP",
    "ALTER",
    "ATTACH",
    "DETACH",
    "PRAGMA",
    "VACUUM",
    "REINDEX",
    "ANALYZE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "UPSERT",
];
/// Functions that read or write files, load code, or allocate at will.
const FORBIDDEN_FUNCTIONS: [&str; 8] = [
    "LOAD_EXTENSION",
    "READFILE",
    "WRITEFILE",
    "EDIT",
    "FTS3_TOKENIZER",
    "ZEROBLOB",
    "RANDOMBLOB",
    "SQLITE_DBPAGE",
];

/// Checks a statement for the SQL tool; returns it without a trailing semicolon.
pub fn check_sql(sql: &str) -> Result<String> {
    let refuse = |why: &str| Err(Error::SqlRefused(why.to_string()));
    if sql.len() > MAX_SQL_BYTES {
        return refuse("the statement is longer than 10000 bytes");
    }
    let words = scan(sql)?;
    let Some(first) = words.first() else {
        return refuse("empty statement");
    };
    if !matches!(first.text.as_str(), "SELECT" | "WITH" | "VALUES") {
        return refuse("only one read-only query is allowed (SELECT, WITH … SELECT or VALUES)");
    }
    for w in &words {
        if FORBIDDEN.contains(&w.text.as_str()) || (w.text == "REPLACE" && !w.call) {
            return Err(Error::SqlRefused(format!(
                "{} is not allowed: the session database is read-only",
                w.text
            )));
        }
        if w.call && FORBIDDEN_FUNCTIONS.contains(&w.text.as_str()) {
            return Err(Error::SqlRefused(format!(
                "the function {} is not allowed",
                w.text.to_lowercase()
            )));
        }
    }
    let body = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    Ok(body.to_string())
}

/// A keyword or identifier outside strings and comments; `call` when a `(` follows it.
struct Word {
    text: String,
    call: bool,
}

/// Splits out the bare words; refuses a second statement and unterminated strings or comments.
fn scan(sql: &str) -> Result<Vec<Word>> {
    let b = sql.as_bytes();
    let mut words: Vec<Word> = Vec::new();
    let mut i = 0;
    let mut ended = false;
    while i < b.len() {
        let c = b[i];
        let close = |i: usize, end: &[u8]| -> Result<usize> {
            find(b, i, end).ok_or_else(|| {
                Error::SqlRefused("unterminated string, identifier or comment".into())
            })
        };
        match c {
            b'\'' => i = close(i + 1, b"'")? + 1,
            b'"' => i = close(i + 1, b"\"")? + 1,
            b'`' => i = close(i + 1, b"`")? + 1,
            b'[' => i = close(i + 1, b"]")? + 1,
            b'-' if b.get(i + 1) == Some(&b'-') => i = find(b, i, b"\n").map_or(b.len(), |e| e + 1),
            b'/' if b.get(i + 1) == Some(&b'*') => i = close(i + 2, b"*/")? + 2,
            b';' => {
                ended = true;
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                if ended {
                    return Err(Error::SqlRefused("one statement only".into()));
                }
                if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
                    let start = i;
                    while i < b.len()
                        && (b[i].is_ascii_alphanumeric()
                            || b[i] == b'_'
                            || b[i] == b'$'
                            || b[i] >= 0x80)
                    {
                        i += 1;
                    }
                    let mut j = i;
                    while j < b.len() && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    words.push(Word {
                        text: String::from_utf8_lossy(&b[start..i]).to_ascii_uppercase(),
                        call: b.get(j) == Some(&b'('),
                    });
                } else {
                    i += 1;
                }
            }
        }
    }
    Ok(words)
}

/// Index of the first `end` at or after `from`. A doubled quote inside a string is an escaped quote
/// and is skipped by the caller's next search.
fn find(b: &[u8], from: usize, end: &[u8]) -> Option<usize> {
    let mut i = from;
    while i + end.len() <= b.len() {
        if &b[i..i + end.len()] == end {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// What the host's read-only runner returns.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct SqlRows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows (at most the cap the host was given).
    pub rows: Vec<Vec<Value>>,
    /// More rows existed than were returned.
    #[serde(default)]
    pub truncated: bool,
}

impl SqlRows {
    /// The result as the tool shows it: a header, one line per row (cells separated by ` | `),
    /// capped in bytes, and a footer saying what was left out.
    pub fn render(&self) -> String {
        let mut out = format!("{FENCE_OPEN}\n");
        out.push_str(&defuse(&self.columns.join(" | ")));
        out.push('\n');
        let mut shown = 0;
        let mut bytes_cut = false;
        for row in &self.rows {
            let line: Vec<String> = row.iter().map(cell).collect();
            let line = defuse(&line.join(" | ").replace('\n', "⏎"));
            if out.len() + line.len() + 1 > MAX_OUTPUT_BYTES {
                bytes_cut = true;
                break;
            }
            out.push_str(&line);
            out.push('\n');
            shown += 1;
        }
        let more = self.truncated || bytes_cut;
        out.push_str(&match (shown, more) {
            (n, false) => format!("({n} row{})", if n == 1 { "" } else { "s" }),
            (n, true) => format!(
                "(first {n} rows shown; the result has more — add LIMIT/OFFSET or aggregate with count(*))"
            ),
        });
        out.push('\n');
        out.push_str(FENCE_CLOSE);
        out
    }
}

fn cell(v: &Value) -> String {
    let s = match v {
        Value::Null => "NULL".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.len() <= MAX_CELL_BYTES {
        return s;
    }
    let mut end = MAX_CELL_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [+{} bytes]", &s[..end], s.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lets_read_only_queries_through() {
        for ok in [
            "SELECT count(*) FROM output_lines WHERE text LIKE '%ERROR%';",
            "with x as (select 1) select * from x",
            "SELECT replace(text, 'a', 'b') FROM messages -- REPLACE INTO x",
            "SELECT 'DROP TABLE x; ATTACH' AS s",
            "VALUES (1), (2)",
        ] {
            check_sql(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "DELETE FROM messages",
            "SELECT 1; DROP TABLE messages",
            "WITH x AS (SELECT 1) INSERT INTO messages(seq) SELECT 1",
            "REPLACE INTO meta VALUES ('a','b')",
            "PRAGMA query_only = 0",
            "ATTACH DATABASE '/tmp/x.db' AS x",
            "SELECT load_extension('evil')",
            "SELECT zeroblob(1000000000)",
            "SELECT 'unterminated",
            "SELECT 1 /* comment",
        ] {
            assert_eq!(check_sql(bad).unwrap_err().code(), "E_SQL_REFUSED", "{bad}");
        }
    }

    #[test]
    fn rendering_caps_rows_and_bytes() {
        let rows = SqlRows {
            columns: vec!["n".into(), "text".into()],
            rows: (0..500)
                .map(|i| vec![Value::from(i), Value::from("x".repeat(100))])
                .collect(),
            truncated: false,
        };
        let out = rows.render();
        assert!(out.len() <= MAX_OUTPUT_BYTES + 200);
        assert!(out.contains("aggregate with count(*))"));
        assert!(out.starts_with(FENCE_OPEN) && out.ends_with(FENCE_CLOSE));
    }
}
