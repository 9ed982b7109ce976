//! Head/tail compression of large tool results.
//!
//! A result over the threshold is sent as a one-line header naming its blob id, its first
//! [`HEAD_LINES`] lines, a marker saying how many lines were left out, and its last
//! [`TAIL_LINES`] lines. Lines longer than [`LINE_CAP_BYTES`] are cut (a 1 MB single-line JSON
//! does not survive as "1 line"), and the head and tail together stay within a byte budget, so
//! the compressed text is always small. Cuts never split a UTF-8 character. The full text is
//! kept as a blob whose id is derived from the content.

use crate::fingerprint::content_id;
use crate::tokens::estimate_text;

/// Lines kept from the start.
pub const HEAD_LINES: usize = 40;
/// Lines kept from the end.
pub const TAIL_LINES: usize = 20;
/// Longest line kept whole, in bytes.
pub const LINE_CAP_BYTES: usize = 320;
/// Byte budget of head + tail together.
pub const BODY_BUDGET_BYTES: usize = 8_000;

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

/// The header line that starts every compressed result.
pub fn header(lines: usize, tokens: u32, blob_id: &str) -> String {
    format!(
        "[smarter-compact] output compressed: {lines} lines, ≈{tokens} tokens. Full text: smart_compact_get(id=\"{blob_id}\")"
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

/// Compresses `text` if its estimated size exceeds `over_tokens`; `None` when it is small
/// enough or compression would not make it smaller.
pub fn compress(text: &str, over_tokens: u32) -> Option<Compressed> {
    let tokens = estimate_text(text);
    if tokens <= over_tokens {
        return None;
    }
    let all = lines(text);
    let blob_id = content_id(text);
    let mut head = Vec::new();
    let mut used = 0;
    for line in all.iter().take(HEAD_LINES) {
        if used >= BODY_BUDGET_BYTES * 2 / 3 {
            break;
        }
        let l = cap_line(line);
        used += l.len() + 1;
        head.push(l);
    }
    let mut tail = Vec::new();
    used = 0;
    for line in all.iter().skip(head.len()).rev().take(TAIL_LINES) {
        if used >= BODY_BUDGET_BYTES / 3 {
            break;
        }
        let l = cap_line(line);
        used += l.len() + 1;
        tail.push(l);
    }
    tail.reverse();
    let omitted = all.len() - head.len() - tail.len();
    let mut out = header(all.len(), tokens, &blob_id);
    for l in &head {
        out.push('\n');
        out.push_str(l);
    }
    if omitted > 0 {
        let first = head.len() + 1;
        let last = head.len() + omitted;
        out.push_str(&format!("\n… {omitted} lines omitted ({first}–{last}) …"));
    }
    for l in &tail {
        out.push('\n');
        out.push_str(l);
    }
    (out.len() < text.len()).then_some(Compressed {
        text: out,
        blob_id,
        lines: all.len(),
        tokens,
    })
}

/// The line itself, or its first [`LINE_CAP_BYTES`] bytes (at a character boundary) and a marker.
fn cap_line(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= LINE_CAP_BYTES {
        return line.into();
    }
    let mut end = LINE_CAP_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
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
