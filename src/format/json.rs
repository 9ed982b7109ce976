//! Reading one wire message as JSON. JavaScript strings may hold lone UTF-16 surrogates, which
//! `JSON.stringify` writes as `\ud800`-style escapes that no UTF-8 JSON reader accepts; such
//! an escape is read as U+FFFD instead, so one odd character never stops compaction. Only the
//! engine's view and the messages it edits see the replacement: messages it keeps are the
//! caller's own objects, and fingerprints hash the bytes as received.

use serde_json::Value;

use crate::error::{Error, Result};

/// Parses message `index`, replacing lone surrogate escapes when that is what failed.
pub fn parse_message(text: &str, index: usize) -> Result<Value> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let fixed = replace_lone_surrogates(text);
            if fixed == text {
                return Err(Error::malformed(index, format!("unreadable JSON: {first}")));
            }
            serde_json::from_str(&fixed)
                .map_err(|e| Error::malformed(index, format!("unreadable JSON: {e}")))
        }
    }
}

fn hex4(b: &[u8], at: usize) -> Option<u16> {
    let s = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// `\uXXXX` escapes of unpaired surrogates become `\ufffd`; everything else is unchanged.
pub fn replace_lone_surrogates(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        // An escape: `\u` + 4 hex digits, or any other two-byte escape.
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex4(b, i + 2) else {
            i += 2;
            continue;
        };
        let high = (0xD800..=0xDBFF).contains(&unit);
        let low = (0xDC00..=0xDFFF).contains(&unit);
        let paired = high
            && b.get(i + 6) == Some(&b'\\')
            && b.get(i + 7) == Some(&b'u')
            && hex4(b, i + 8).is_some_and(|n| (0xDC00..=0xDFFF).contains(&n));
        if paired {
            i += 12;
        } else if high || low {
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"x\ud800y"}"#),
            r#"{"a":"x\ufffdy"}"#
        );
        assert_eq!(replace_lone_surrogates(r#""\udfff""#), r#""\ufffd""#);
        let pair = r#""\ud83d\ude00 ok""#;
        assert_eq!(replace_lone_surrogates(pair), pair, "a valid pair stays");
        let escaped = r#""\\ud800 is text""#;
        assert_eq!(
            replace_lone_surrogates(escaped),
            escaped,
            "an escaped backslash is not an escape"
        );
        let v = parse_message(r#"{"role":"user","content":"bad \ud800 end"}"#, 0).unwrap();
        assert_eq!(v["content"], "bad \u{fffd} end");
        assert_eq!(parse_message("{oops", 3).unwrap_err().code(), "E_MALFORMED");
    }
}
