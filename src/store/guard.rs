//! The SQL tool's guard and its output. The guard lets through one read-only query (SELECT,
//! WITH … SELECT, VALUES) and nothing that writes, attaches, changes pragmas or loads code; the
//! host then runs it on a read-only connection with a deadline and row cap. Results are capped in
//! rows and bytes, and the cut is said.

use serde::Deserialize;
use serde_json::Value;

use super::fence::{defuse, FENCE_CLOSE, FENCE_OPEN};
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
    if sql.contains('\0') {
        // SQLite stops reading at a NUL: what follows would be checked here and never run (or,
        // by a backend that passes it on, run unchecked).
        return refuse("the statement contains a NUL character");
    }
    let words = scan(sql)?;
    let Some(first) = words.first() else {
        return refuse("empty statement");
    };
    if first.quoted || !matches!(first.text.as_str(), "SELECT" | "WITH" | "VALUES") {
        return refuse("only one read-only query is allowed (SELECT, WITH … SELECT or VALUES)");
    }
    for w in &words {
        let keyword = !w.quoted;
        if keyword && (FORBIDDEN.contains(&w.text.as_str()) || (w.text == "REPLACE" && !w.call)) {
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

/// A name outside strings and comments, as SQLite reads it: a bare word (a keyword or an
/// identifier) or a quoted identifier (`"…"`, `[…]`, `` `…` ``, its quotes unescaped); `call`
/// when the next token is `(`, whatever white space or comments come between.
struct Word {
    /// The name, upper-cased.
    text: String,
    /// Written in quotes or brackets: a name, never a keyword.
    quoted: bool,
    call: bool,
}

/// A token of the statement; white space and comments are none.
enum Token {
    Name { text: String, quoted: bool },
    Open,
    Other,
}

/// Splits out the names; refuses a second statement and unterminated strings, identifiers or
/// comments.
fn scan(sql: &str) -> Result<Vec<Word>> {
    let b = sql.as_bytes();
    let unterminated = || Error::SqlRefused("unterminated string, identifier or comment".into());
    let mut tokens: Vec<Token> = Vec::new();
    let mut i = 0;
    let mut ended = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            i = find(b, i, b"\n").map_or(b.len(), |e| e + 1);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = find(b, i + 2, b"*/").ok_or_else(unterminated)? + 2;
            continue;
        }
        if c == b';' {
            ended = true;
            i += 1;
            continue;
        }
        if ended {
            return Err(Error::SqlRefused("one statement only".into()));
        }
        let token = match c {
            b'(' => {
                i += 1;
                Token::Open
            }
            b'\'' => {
                i = quoted(b, i, b'\'').ok_or_else(unterminated)?.1;
                Token::Other
            }
            b'"' | b'`' | b'[' => {
                let close = if c == b'[' { b']' } else { c };
                let (text, next) = quoted(b, i, close).ok_or_else(unterminated)?;
                i = next;
                Token::Name { text, quoted: true }
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                let text = String::from_utf8_lossy(&b[start..i]).into_owned();
                Token::Name {
                    text,
                    quoted: false,
                }
            }
            _ => {
                i += 1;
                Token::Other
            }
        };
        tokens.push(token);
    }
    let mut words = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        if let Token::Name { text, quoted } = t {
            words.push(Word {
                text: text.to_ascii_uppercase(),
                quoted: *quoted,
                call: matches!(tokens.get(k + 1), Some(Token::Open)),
            });
        }
    }
    Ok(words)
}

/// A quoted token starting at `b[at]` and closed by `close`, a doubled `close` standing for one
/// (SQLite's escape; `[…]` has none): its unescaped text and the index after it.
fn quoted(b: &[u8], at: usize, close: u8) -> Option<(String, usize)> {
    let mut text = Vec::new();
    let mut i = at + 1;
    loop {
        let c = *b.get(i)?;
        if c == close {
            if close != b']' && b.get(i + 1) == Some(&close) {
                text.push(close);
                i += 2;
                continue;
            }
            return Some((String::from_utf8_lossy(&text).into_owned(), i + 1));
        }
        text.push(c);
        i += 1;
    }
}

/// Index of the first `end` at or after `from`.
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
