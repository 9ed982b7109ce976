//! Validation of ids that become file names or are looked up (session ids, blob ids).

use crate::error::{Error, Result};

/// Longest accepted id.
pub const MAX_ID_LEN: usize = 128;

/// Accepts ids made of ASCII letters, digits, `-`, `_` and `.`, not starting with a dot, at most
/// [`MAX_ID_LEN`] long: nothing that could name another directory.
pub fn validate_id(id: &str) -> Result<()> {
    let reason = if id.is_empty() {
        Some("empty")
    } else if id.len() > MAX_ID_LEN {
        Some("longer than 128 characters")
    } else if id.starts_with('.') {
        Some("starts with a dot")
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        Some("only letters, digits, '-', '_' and '.' are allowed")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(Error::InvalidId {
            id: id.chars().take(64).collect(),
            reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_paths_and_odd_bytes() {
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "a\\b",
            ".hidden",
            "a\0b",
            "é",
            &"x".repeat(129),
        ] {
            let err = validate_id(bad).unwrap_err();
            assert_eq!(err.code(), "E_BAD_ID", "{bad:?}");
        }
        for good in ["ses_01HZ", "3f2a-11ef.b", "django__django-11087"] {
            validate_id(good).unwrap();
        }
    }
}
