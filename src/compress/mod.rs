//! Head/tail compression of large tool results.
//!
//! A result over the threshold is sent as a header naming its blob id and exactly what was left
//! out (lines, bytes, estimated tokens), its first [`HEAD_LINES`] lines, a marker for the
//! omitted middle, the lines of that middle that look like failures (errors, tracebacks, failed
//! tests, panics, non-zero exits) with their line numbers, and its last [`TAIL_LINES`] lines.
//! Lines longer than [`LINE_CAP_BYTES`] are cut (a 1 MB single-line JSON does not survive as
//! "1 line"), and everything kept stays within a byte budget, so the compressed text is always
//! small. Cuts never split a UTF-8 character. The full text is kept as a blob whose id is
//! derived from the content.

mod failures;

pub use failures::looks_like_failure;

use crate::fingerprint::content_id;
use crate::tokens::estimate_text;

/// Lines kept from the start.
pub const HEAD_LINES: usize = 40;
/// Lines kept from the end.
pub const TAIL_LINES: usize = 20;
/// Longest line kept whole, in bytes.
pub const LINE_CAP_BYTES: usize = 320;
/// Byte budget of everything kept: head, failure lines and tail together.
pub const BODY_BUDGET_BYTES: usize = 8_000;
/// The part of the budget the failure lines of the omitted middle may use; the head and the
/// tail give it up only when the middle has such lines.
pub const FAILURE_BUDGET_BYTES: usize = BODY_BUDGET_BYTES / 4;
/// Most failure lines kept from the omitted middle.
pub const FAILURE_LINES: usize = 40;

/// A compressed tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct Compressed {
    /// What is sent instead of the full text.
    pub text: String,
    /// Content-derived id of the full text.
    pub blob_id: String,
    /// Lines in the full text.
    pub lines: usize,
    /// Estimated tokens of the full text.
    pub tokens: u32,
}

/// What a compressed text leaves out of the full one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// Lines not shown at all.
    pub lines: usize,
    /// Bytes of the full text not shown (whole lines left out and the ends of cut lines).
    pub bytes: usize,
    /// Estimated tokens of what is not shown.
    pub tokens: u32,
}

/// The header line that starts every compressed result.
pub fn header(lines: usize, tokens: u32, blob_id: &str, left_out: LeftOut) -> String {
    format!(
        "[smarter-compact] output compressed: {lines} lines, ≈{tokens} tokens; left out: {} lines, {} bytes, ≈{} tokens. \
         Full text: smart_compact_get(id=\"{blob_id}\"); a slice: add start_line/end_line, or grep=\"text\" for the matching lines",
        left_out.lines, left_out.bytes, left_out.tokens
    )
}

/// Splits a text into lines the way the store numbers them: on `\n`, a trailing `\r` belongs
/// to the line break, and a final line break does not start another line.
pub fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// The lines kept from the start and the end within `budget` bytes (two thirds for the head).
fn head_and_tail(all: &[&str], budget: usize) -> (usize, usize) {
    let take = |lines: &mut dyn Iterator<Item = &&str>, cap: usize, share: usize| {
        let (mut n, mut used) = (0, 0);
        for line in lines.take(cap) {
            if used >= share {
                break;
            }
            used += cap_line(line).len() + 1;
            n += 1;
        }
        n
    };
    let head = take(&mut all.iter(), HEAD_LINES, budget * 2 / 3);
    let tail = take(&mut all[head..].iter().rev(), TAIL_LINES, budget / 3);
    (head, tail)
}

/// Compresses `text` if its estimated size exceeds `over_tokens`; `None` when it is small
/// enough or compression would not make it smaller.
pub fn compress(text: &str, over_tokens: u32) -> Option<Compressed> {
    let tokens = estimate_text(text);
    if tokens <= over_tokens {
        return None;
    }
    let all = lines(text);
    let blob_id = content_id(text);
    let (mut head, mut tail) = head_and_tail(&all, BODY_BUDGET_BYTES);
    let fails_in = |head: usize, tail: usize| {
        (head..all.len() - tail)
            .filter(|&i| looks_like_failure(all[i]))
            .collect::<Vec<_>>()
    };
    let mut failing = fails_in(head, tail);
    if !failing.is_empty() {
        // Head and tail shrink to make room; the middle only grows, so it keeps every failure.
        (head, tail) = head_and_tail(&all, BODY_BUDGET_BYTES - FAILURE_BUDGET_BYTES);
        failing = fails_in(head, tail);
    }
    let mut kept_failures = Vec::new();
    let mut used = 0;
    for &i in failing.iter().take(FAILURE_LINES) {
        used += cap_line(all[i]).len() + 12; // the line, its number and its line break
        if used > FAILURE_BUDGET_BYTES {
            break;
        }
        kept_failures.push(i);
    }
    let middle = head..all.len() - tail;
    let omitted = middle.len() - kept_failures.len();

    // The body, and the part of each full line it shows (for the header's account).
    let mut body = String::new();
    let mut shown = String::new();
    let mut show = |body: &mut String, line: &str| {
        body.push_str(&cap_line(line));
        shown.push_str(&line[..cap_at(line)]);
        shown.push('\n');
    };
    for line in &all[..head] {
        body.push('\n');
        show(&mut body, line);
    }
    if !middle.is_empty() {
        let (first, last, n) = (middle.start + 1, middle.end, middle.len());
        body.push_str(&match (kept_failures.len(), failing.len()) {
            (0, _) => format!("\n… {n} lines omitted ({first}–{last}) …"),
            (k, f) if k == f => format!(
                "\n… lines {first}–{last} omitted except the {k} that look like failures, shown with their numbers …"
            ),
            (k, f) => format!(
                "\n… lines {first}–{last} omitted; {f} look like failures, the first {k} shown with their numbers …"
            ),
        });
    }
    for &i in &kept_failures {
        body.push_str(&format!("\n[line {}] ", i + 1));
        show(&mut body, all[i]);
    }
    if !kept_failures.is_empty() && tail > 0 {
        body.push_str(&format!("\n… the last {tail} lines …"));
    }
    for line in &all[all.len() - tail..] {
        body.push('\n');
        show(&mut body, line);
    }
    let full_bytes: usize = all.iter().map(|l| l.len()).sum();
    let shown_bytes = shown.len() - (head + kept_failures.len() + tail);
    let left_out = LeftOut {
        lines: omitted,
        bytes: full_bytes - shown_bytes,
        tokens: tokens.saturating_sub(estimate_text(&shown)),
    };
    let out = header(all.len(), tokens, &blob_id, left_out) + &body;
    (out.len() < text.len()).then_some(Compressed {
        text: out,
        blob_id,
        lines: all.len(),
        tokens,
    })
}

/// How many bytes of `line` are kept: all of it, or its first [`LINE_CAP_BYTES`] bytes cut back
/// to a character boundary.
fn cap_at(line: &str) -> usize {
    if line.len() <= LINE_CAP_BYTES {
        return line.len();
    }
    let mut end = LINE_CAP_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The line itself, or its first [`LINE_CAP_BYTES`] bytes (at a character boundary) and a marker.
fn cap_line(line: &str) -> std::borrow::Cow<'_, str> {
    let end = cap_at(line);
    if end == line.len() {
        return line.into();
    }
    format!(
        "{}… [line cut: {} more bytes]",
        &line[..end],
        line.len() - end
    )
    .into()
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_follow_crlf_and_trailing_newline() {
        assert_eq!(lines("a\r\nb\r\n"), vec!["a", "b"]);
        assert_eq!(lines("a\n\nb"), vec!["a", "", "b"]);
        assert!(lines("").is_empty());
    }

    #[test]
    fn cap_never_splits_a_character() {
        let line = "é".repeat(LINE_CAP_BYTES);
        let capped = cap_line(&line);
        assert!(capped.starts_with(&"é".repeat(LINE_CAP_BYTES / 2)));
        assert!(capped.contains("line cut"));
    }
}
