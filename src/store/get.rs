//! Paging through the full text of a compressed output (by blob id) or of a message (by seq),
//! or through the lines of it that contain a text (`grep`), each with its line number.

use serde::Serialize;

use super::fence::{defuse, FENCE_CLOSE, FENCE_OPEN};
use super::ids::validate_id;
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
    /// The text the lines were filtered on, when a grep.
    pub grep: Option<String>,
    /// Lines of `start_line..=end_line` that match the grep (all of them, not only this page's).
    pub matches: Option<usize>,
}

/// Most bytes shown of one matching line.
pub const GREP_LINE_BYTES: usize = 1_000;
/// Longest grep text, in bytes.
pub const GREP_MAX_BYTES: usize = 200;

/// Whether `line` contains one of the `|`-separated alternatives of `needles` (lowercased),
/// ignoring case.
fn matches_any(line: &str, needles: &[String]) -> bool {
    let lower = line.to_lowercase();
    needles.iter().any(|n| lower.contains(n.as_str()))
}

/// The lowercased alternatives of a grep text; an error when none is left or it is too long.
fn needles_of(grep: &str) -> Result<Vec<String>> {
    if grep.len() > GREP_MAX_BYTES {
        return Err(Error::InvalidArgument(format!(
            "grep is {} bytes; at most {GREP_MAX_BYTES}",
            grep.len()
        )));
    }
    let needles: Vec<String> = grep
        .split('|')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_lowercase)
        .collect();
    if needles.is_empty() {
        return Err(Error::InvalidArgument(
            "grep must contain some text (alternatives separated by |)".into(),
        ));
    }
    Ok(needles)
}

/// A page of the text named by `id` (a blob id, or a message number): its lines from
/// `start_line` to `end_line`, or with `grep`, the lines of that range containing the text.
pub fn get<S: Sql + ?Sized>(
    db: &mut S,
    id: &str,
    start_line: Option<usize>,
    end_line: Option<usize>,
    grep: Option<&str>,
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
    if let Some(grep) = grep.filter(|g| !g.is_empty()) {
        return grep_page(id, &all, start, end_line, grep);
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
        grep: None,
        matches: None,
    })
}

/// The lines of `start..=asked_end` that contain `grep`, as `number: line`, a page at a time.
fn grep_page(
    id: &str,
    all: &[&str],
    start: usize,
    end_line: Option<usize>,
    grep: &str,
) -> Result<Page> {
    let needles = needles_of(grep)?;
    let total = all.len().max(1);
    let asked_end = end_line.unwrap_or(total);
    if asked_end < start {
        return Err(Error::InvalidArgument(format!(
            "end_line {asked_end} is before start_line {start}"
        )));
    }
    let end = asked_end.min(total);
    let hits: Vec<usize> = (start..=end)
        .filter(|&n| all.get(n - 1).is_some_and(|l| matches_any(l, &needles)))
        .collect();
    let mut out = String::new();
    let mut shown: usize = 0;
    for &n in hits.iter().take(PAGE_LINES) {
        let line = all[n - 1];
        let prefix = format!("{n}: ");
        let room = PAGE_BYTES.saturating_sub(out.len() + prefix.len() + 1);
        if shown > 0 && line.len() > room {
            break;
        }
        let mut cut = line.len().min(room.min(GREP_LINE_BYTES));
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(&prefix);
        out.push_str(&line[..cut]);
        if cut < line.len() {
            out.push_str(&format!(
                "… [{} more bytes: smart_compact_get(id=\"{id}\", start_line={n}, end_line={n})]",
                line.len() - cut
            ));
        }
        out.push('\n');
        shown += 1;
    }
    let last_shown = hits.get(shown.saturating_sub(1)).copied();
    let next = (shown < hits.len()).then(|| {
        let from = last_shown.map_or(start, |n| n + 1);
        let to = end_line.map_or(String::new(), |_| format!(", end_line={end}"));
        format!("smart_compact_get(id=\"{id}\", grep={grep:?}, start_line={from}{to})")
    });
    Ok(Page {
        id: id.to_string(),
        start_line: start,
        end_line: end,
        total_lines: total,
        text: out,
        next,
        grep: Some(grep.to_string()),
        matches: Some(hits.len()),
    })
}

impl Page {
    /// The page as the tool shows it to the model.
    pub fn render(&self) -> String {
        let what = match (&self.grep, self.matches) {
            (Some(g), Some(m)) => format!(
                "[smart_compact_get id={} grep={g:?}: {m} of lines {}–{} (of {}) match]",
                self.id, self.start_line, self.end_line, self.total_lines
            ),
            _ => format!(
                "[smart_compact_get id={} lines {}–{} of {}]",
                self.id, self.start_line, self.end_line, self.total_lines
            ),
        };
        let mut s = format!("{FENCE_OPEN}\n{what}\n{}", defuse(&self.text));
        match &self.next {
            Some(next) => s.push_str(&format!("[more: {next}]\n")),
            None => s.push_str("[end]\n"),
        }
        s.push_str(FENCE_CLOSE);
        s
    }
}
