//! The pointer put in front of the turn after the cut. Its text depends only on what was
//! removed, so the same cut always produces the same bytes.

/// Marker that starts every pointer.
pub const POINTER_PREFIX: &str = "[smarter-compact] This session continues.";

/// The pointer text for `messages` removed messages of about `tokens` tokens.
pub fn pointer_text(messages: usize, tokens: u64) -> String {
    let noun = if messages == 1 { "message" } else { "messages" };
    format!(
        "{POINTER_PREFIX} {messages} earlier {noun} (≈{}) are in the session store, not in this context. \
Use smart_compact_search(query) or smart_compact_sql(sql) before answering from anything you cannot see.",
        approx_tokens(tokens)
    )
}

/// `850 tokens`, `12k tokens`, `1.2M tokens`.
pub fn approx_tokens(tokens: u64) -> String {
    if tokens < 1_000 {
        format!("{tokens} tokens")
    } else if tokens < 1_000_000 {
        format!("{}k tokens", (tokens + 500) / 1_000)
    } else {
        format!("{:.1}M tokens", tokens as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_is_deterministic_and_readable() {
        let p = pointer_text(214, 183_400);
        assert_eq!(p, pointer_text(214, 183_400));
        assert!(p.starts_with(POINTER_PREFIX));
        assert!(p.contains("214 earlier messages (≈183k tokens)"));
        assert!(pointer_text(1, 12).contains("1 earlier message (≈12 tokens)"));
        assert_eq!(approx_tokens(2_345_678), "2.3M tokens");
    }
}
