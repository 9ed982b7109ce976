//! Paging through the full text of a compressed output (by blob id) or of a message (by seq).

use serde::Serialize;

use super::ids::validate_id;
use super::search::{defuse, FENCE_CLOSE, FENCE_OPEN};
use super::sql::{Sql, SqlValue};
use crate::compress::lines;
use crate::error::{Error, Result};

/// Most lines on one page.
pub const PAGE_LINES: usize = 200;
/// Most bytes on one page (about 3k tokens): a page can never re-flood the context.
pub const PAGE_BYTES: usize = 12_000;

/// One page of a full text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page {
    /// The id asked for.
    pub id: String,
    /// First line shown (1-based).
    pub start_line: usize,
    /// Last line shown.
    pub end_line: usize,
    /// Lines in the full text.
    pub total_lines: usize,
    /// The lines, cut to the page budget.
    pub text: String,
    /// The call for the next page, if any.
    pub next: Option<String>,
}

/// A page of the text named by `id` (a blob id, or a message number).
pub fn get<S: Sql + ?Sized>(
    db: &mut S,
    id: &str,
    start_line: Option<usize>,
    end_line: Option<usize>,
) -> Result<Page> {
    let id = id.trim();
    let full = if !id.is_empty() && id.len() < 16 && id.bytes().all(|b| b.is_ascii_digit()) {
        let seq: i64 = id
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("bad message number {id}")))?;
        db.query(
            "SELECT text FROM messages WHERE seq = ?",
            &[SqlValue::Int(seq)],
        )?
    } else {
        validate_id(id)?;
        db.query("SELECT text FROM blobs WHERE id = ?", &[id.into()])?
    };
    let Some(text) = full.into_iter().next().map(|r| r[0].as_text()) else {
        return Err(Error::NotFound(format!(
            "no compressed output or message with id {id:?}"
        )));
    };
    let all = lines(&text);
    let total = all.len().max(1);
    let start = start_line.unwrap_or(1);
    if start == 0 || start > total {
        return Err(Error::InvalidArgument(format!(
            "start_line must be in 1..={total}, got {start}"
        )));
    }
    let asked_end = end_line.unwrap_or(start + PAGE_LINES - 1);
    if asked_end < start {
        return Err(Error::InvalidArgument(format!(
            "end_line {asked_end} is before start_line {start}"
        )));
    }
    let mut end = asked_end.min(total).min(start + PAGE_LINES - 1);
    let mut out = String::new();
    for n in start..=end {
        let line = all.get(n - 1).copied().unwrap_or("");
        let room = PAGE_BYTES.saturating_sub(out.len());
        if line.len() + 1 > room && n > start {
            end = n - 1;
            break;
        }
        if line.len() + 1 > room {
            let mut cut = room.saturating_sub(1);
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&line[..cut]);
            out.push_str(&format!(
                "… [line {n} continues for {} more bytes; read it with smart_compact_sql: SELECT substr(text, {}, {PAGE_BYTES}) FROM {} WHERE …]\n",
                line.len() - cut,
                cut + 1,
                if id.bytes().all(|b| b.is_ascii_digit()) { "messages" } else { "blob_lines" }
            ));
            end = n;
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    let next =
        (end < total).then(|| format!("smart_compact_get(id=\"{id}\", start_line={})", end + 1));
    Ok(Page {
        id: id.to_string(),
        start_line: start,
        end_line: end,
        total_lines: total,
        text: out,
        next,
    })
}

impl Page {
    /// The page as the tool shows it to the model.
    pub fn render(&self) -> String {
        let mut s = format!(
            "{FENCE_OPEN}\n[smart_compact_get id={} lines {}–{} of {}]\n{}",
            self.id,
            self.start_line,
            self.end_line,
            self.total_lines,
            defuse(&self.text)
        );
        match &self.next {
            Some(next) => s.push_str(&format!("[more: {next}]\n")),
            None => s.push_str("[end]\n"),
        }
        s.push_str(FENCE_CLOSE);
        s
    }
}
