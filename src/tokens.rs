//! Token estimation without a tokenizer on the hot path.
//!
//! One pass over the characters, counting what a byte-pair tokenizer of the GPT-4/Claude family
//! makes of each run: short words are one token and long ones split every few letters, numbers
//! split into groups of three digits, punctuation merges in pairs, indentation and blank lines
//! cost about one token, CJK costs about one token per character. Because it reads runs rather
//! than counting characters, it follows the content kind by itself: prose, code and JSON/log
//! text come out at their own characters-per-token ratios. The constants were fitted against a
//! real BPE tokenizer on the real sessions; the benchmark reports the error by content kind.

use crate::message::{Block, Message};

/// Letters per token in a long word (a short word is one token).
const LETTERS_PER_TOKEN: usize = 5;
/// Digits per token (BPE vocabularies split numbers into groups of up to three digits).
const DIGITS_PER_TOKEN: usize = 3;
/// Fixed cost of a message (role, separators).
const MESSAGE_OVERHEAD: u32 = 4;
/// Fixed cost of a tool call or result wrapper (name, id, framing).
const TOOL_OVERHEAD: u32 = 8;
/// Flat estimate for an image or another binary attachment.
const IMAGE_TOKENS: u32 = 1_000;

#[derive(Clone, Copy, PartialEq)]
enum Run {
    None,
    Letters,
    Digits,
    Punct,
    Spaces,
    Newlines,
}

/// Estimated tokens of a text.
pub fn estimate_text(text: &str) -> u32 {
    let mut tokens: usize = 0;
    let mut run = Run::None;
    let mut len: usize = 0;
    let close = |run: Run, len: usize| -> usize {
        match run {
            Run::None => 0,
            Run::Letters => len.div_ceil(LETTERS_PER_TOKEN),
            Run::Digits => len.div_ceil(DIGITS_PER_TOKEN),
            // "()", "):", "->", "\"," are single tokens; a lone mark is one.
            Run::Punct => len.div_ceil(2),
            // One space is glued to the next word; indentation is one token per 8 columns.
            Run::Spaces => (len > 1) as usize + len / 8,
            // A blank line or a newline with indentation is one token.
            Run::Newlines => len.div_ceil(2),
        }
    };
    for c in text.chars() {
        let kind = if c.is_ascii_alphabetic() || c == '_' {
            Run::Letters
        } else if c.is_ascii_digit() {
            Run::Digits
        } else if c == ' ' || c == '\t' {
            Run::Spaces
        } else if c == '\n' || c == '\r' {
            Run::Newlines
        } else if c.is_ascii() {
            Run::Punct
        } else {
            tokens += close(run, len);
            run = Run::None;
            len = 0;
            tokens += non_ascii_cost(c);
            continue;
        };
        if kind != run {
            tokens += close(run, len);
            run = kind;
            len = 0;
        }
        len += 1;
    }
    tokens += close(run, len);
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// Tokens of one non-ASCII character, by script (tenths are rounded per character, which is
/// close enough: such text comes in runs).
fn non_ascii_cost(c: char) -> usize {
    match c as u32 {
        // Latin-1 supplement and extended Latin: accents mostly merge with their word.
        0x00A0..=0x024F => 1,
        // CJK, kana, hangul: about one token per character.
        0x3000..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF => 1,
        // Emoji and other astral symbols: two to three byte-level tokens.
        0x1F000.. => 2,
        _ => 1,
    }
}

/// Estimated tokens of a canonical message as a model would see it.
pub fn estimate_message(msg: &Message) -> u32 {
    let mut total = MESSAGE_OVERHEAD;
    for b in &msg.blocks {
        total = total.saturating_add(match b {
            Block::Text(t) => estimate_text(t),
            Block::Thinking { text, .. } => estimate_text(text),
            Block::ToolCall {
                name, arguments, ..
            } => TOOL_OVERHEAD + estimate_text(name) + estimate_text(arguments),
            Block::ToolResult { text, .. } => TOOL_OVERHEAD + estimate_text(text),
            Block::Image => IMAGE_TOKENS,
            Block::Other(json) => estimate_text(json),
        });
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_simple_text() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("hello"), 1);
        assert_eq!(estimate_text("hello world"), 2);
        assert_eq!(estimate_text("12345678"), 3);
    }

    #[test]
    fn code_costs_more_per_character_than_prose() {
        let prose = "The quick brown fox jumps over the lazy dog and keeps running far away.";
        let code = "if (x[i] != y[j]) { z->next = &w; return -1; } // ok?";
        let ratio = |s: &str| s.len() as f64 / estimate_text(s) as f64;
        assert!(
            ratio(prose) > ratio(code) + 1.0,
            "{} vs {}",
            ratio(prose),
            ratio(code)
        );
    }

    #[test]
    fn cjk_is_about_one_token_per_character() {
        assert_eq!(estimate_text("漢字漢字"), 4);
        assert_eq!(estimate_text("😀"), 2);
    }
}
