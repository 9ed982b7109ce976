//! Thresholds: which number of tokens triggers a trim for a model, from the per-model table,
//! the model's context window (told by the host or known by name) and the host's reserve.

use super::{parse_int, parse_share, Config};

/// The `default` entry's built-in value (used if a table has lost its `default`).
pub(super) const BUILTIN_DEFAULT: u32 = 125_000;

/// Built-in per-model thresholds (pattern, tokens). When the host tells the model's context
/// window, each is capped at `trim_at_fraction` of it.
pub(super) const BUILTIN_TRIM_AT: [(&str, u32); 2] =
    [("haiku", 95_000), ("default", BUILTIN_DEFAULT)];

/// The default share of the usable window a built-in threshold is capped at. The hosts run their
/// own compaction once the context passes the window less a reserve (Pi: 16,384 tokens by
/// default; OpenCode: the model's output limit, at most 32,000); a request sent at 60% of that,
/// plus the answer and the next tool results, stays below it with room for the error of the
/// token estimate.
pub const DEFAULT_TRIM_AT_FRACTION: f64 = 0.6;

/// Context windows of well-known models (pattern, tokens), for hosts that do not tell it (the
/// proxy): the providers' published input limits. `[context_proxy.context_window]` adds or
/// replaces entries.
pub(super) const KNOWN_WINDOWS: [(&str, u32); 7] = [
    ("claude-", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-", 1_000_000),
];

/// A threshold: a number of tokens, or a share of the model's context window (`"60%"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrimAt {
    /// Tokens.
    Tokens(u32),
    /// A fraction (0, 1] of the context window; without a known window the `default` entry
    /// applies instead.
    Share(f64),
}

impl TrimAt {
    /// A threshold as a user writes it: whole tokens in 1000..=10000000 (`"120000"`,
    /// `"120_000"`) or a percentage of the window in (0, 100] (`"60%"`).
    pub fn parse(raw: &str) -> Option<TrimAt> {
        if raw.trim().ends_with('%') {
            return parse_share(raw)
                .filter(|f| *f > 0.0 && *f <= 1.0)
                .map(TrimAt::Share);
        }
        parse_int(raw, 1_000, 10_000_000).map(TrimAt::Tokens)
    }
}

impl serde::Serialize for TrimAt {
    /// Tokens as a number, a share as its percentage text (`"60%"`), as `config.toml` writes them.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            TrimAt::Tokens(t) => s.serialize_u32(*t),
            TrimAt::Share(f) => s.serialize_str(&format!("{}%", round2(f * 100.0))),
        }
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Config {
    /// The threshold for a model whose context window is `window` tokens (0: not known), of
    /// which the host keeps `reserve` free (its own compaction fires above window − reserve):
    /// the global override, else the most specific matching pattern of the table, else its
    /// `default` entry. A share is of the window and needs it (without it the next rule
    /// applies); a built-in entry is capped at `trim_at_fraction` of the usable window; the
    /// user's own token values are taken as they are.
    pub fn trim_at_for(&self, model: &str, window: u32, reserve: u32) -> u32 {
        let usable = usable_window(window, reserve);
        if let Some(t) = self.trim_at_override {
            return t;
        }
        let model = model.to_ascii_lowercase();
        let mut best: Option<(usize, u32)> = None;
        for (pattern, value) in &self.trim_at_table {
            if pattern == "default" || !pattern_matches(pattern, &model) {
                continue;
            }
            if best.is_some_and(|(len, _)| pattern.len() <= len) {
                continue;
            }
            if let Some(t) = self.resolve_entry(pattern, *value, window, usable) {
                best = Some((pattern.len(), t));
            }
        }
        best.map(|(_, t)| t).unwrap_or_else(|| {
            self.trim_at_table
                .iter()
                .find(|(p, _)| p == "default")
                .and_then(|(p, v)| self.resolve_entry(p, *v, window, usable))
                .unwrap_or_else(|| self.cap(BUILTIN_DEFAULT, usable))
        })
    }

    /// The context window of a model: what the host told (`told`, 0 when it did not), else the
    /// most specific pattern of the window table, else 0 (not known).
    pub fn window_for(&self, model: &str, told: u32) -> u32 {
        if told > 0 {
            return told;
        }
        let model = model.to_ascii_lowercase();
        self.window_table
            .iter()
            .filter(|(p, _)| pattern_matches(p, &model))
            .max_by_key(|(p, _)| p.len())
            .map_or(0, |(_, t)| *t)
    }

    /// One table entry in tokens, or None when it is a share and the window is not known.
    fn resolve_entry(&self, pattern: &str, value: TrimAt, window: u32, usable: u32) -> Option<u32> {
        match value {
            TrimAt::Share(_) if window == 0 => None,
            TrimAt::Share(f) => Some(((f * f64::from(window)) as u32).max(1)),
            TrimAt::Tokens(t) if BUILTIN_TRIM_AT.contains(&(pattern, t)) => {
                Some(self.cap(t, usable))
            }
            TrimAt::Tokens(t) => Some(t),
        }
    }

    /// A built-in threshold under a known usable window: at most `trim_at_fraction` of it.
    fn cap(&self, tokens: u32, usable: u32) -> u32 {
        if usable == 0 {
            return tokens;
        }
        tokens.min(((self.trim_at_fraction * f64::from(usable)) as u32).max(1))
    }

    /// Reads `[context_proxy.trim_at]` of one file (`file` names it in warnings and origins);
    /// its entries replace the same patterns of earlier files.
    pub(super) fn read_trim_table(&mut self, file: &str, table: &toml::Value) {
        let Some(table) = table.as_table() else {
            self.warn(format!(
                "{file} [context_proxy.trim_at] is not a table; ignored"
            ));
            return;
        };
        for (pattern, v) in table {
            let value = match v {
                toml::Value::Integer(i) => TrimAt::parse(&i.to_string()),
                toml::Value::String(s) if s.trim().ends_with('%') => TrimAt::parse(s),
                _ => None,
            };
            match value {
                Some(value) => {
                    let pattern = pattern.to_ascii_lowercase();
                    self.trim_at_table.retain(|(p, _)| *p != pattern);
                    self.origins.insert(format!("trim_at.{pattern}"), file.to_string());
                    self.trim_at_table.push((pattern, value));
                }
                None => self.warn(format!("{file} trim_at {pattern:?} = {v} is neither a whole number of tokens in 1000..=10000000 nor a percentage of the window like \"60%\"; ignored")),
            }
        }
    }

    /// Reads `[context_proxy.context_window]` of one file, like [`Config::read_trim_table`].
    pub(super) fn read_window_table(&mut self, file: &str, table: &toml::Value) {
        let Some(table) = table.as_table() else {
            self.warn(format!(
                "{file} [context_proxy.context_window] is not a table; ignored"
            ));
            return;
        };
        for (pattern, v) in table {
            match v.as_integer().and_then(|i| parse_int(&i.to_string(), 1_000, 100_000_000)) {
                Some(tokens) => {
                    let pattern = pattern.to_ascii_lowercase();
                    self.window_table.retain(|(p, _)| *p != pattern);
                    self.origins.insert(format!("context_window.{pattern}"), file.to_string());
                    self.window_table.push((pattern, tokens));
                }
                None => self.warn(format!("{file} context_window {pattern:?} = {v} is not a whole number of tokens in 1000..=100000000; ignored")),
            }
        }
    }
}

/// `*` matches any run of characters; a pattern without `*` matches as a substring.
pub(super) fn pattern_matches(pattern: &str, model: &str) -> bool {
    if !pattern.contains('*') {
        return model.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = model;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// The window less the host's reserve; a reserve of more than three quarters of the window
/// (a host default meant for larger models) leaves a quarter. 0 when the window is not known.
fn usable_window(window: u32, reserve: u32) -> u32 {
    window.saturating_sub(reserve).max(window / 4)
}

#[cfg(test)]
mod tests {
    use super::super::tests::env;
    use super::*;
    use serde_json::json;

    #[test]
    fn the_window_caps_the_built_in_thresholds() {
        let c = Config::resolve(&env(&[]), None, &json!({}));
        // The README's worked examples.
        assert_eq!(
            c.trim_at_for("local", 32_768, 16_384),
            9_830,
            "Pi, 32k window"
        );
        assert_eq!(
            c.trim_at_for("local", 32_768, 8_192),
            14_745,
            "OpenCode, 8k output"
        );
        assert_eq!(
            c.trim_at_for("claude-sonnet-4", 200_000, 0),
            120_000,
            "proxy"
        );
        assert_eq!(
            c.trim_at_for("claude-sonnet-4", 200_000, 32_000),
            100_800,
            "OpenCode"
        );
        assert_eq!(
            c.trim_at_for("claude-sonnet-4", 200_000, 16_384),
            110_169,
            "Pi"
        );
        assert_eq!(c.trim_at_for("claude-sonnet-4", 1_000_000, 32_000), 125_000);
        assert_eq!(c.trim_at_for("claude-haiku-4-5", 1_000_000, 0), 95_000);
        assert_eq!(c.trim_at_for("claude-haiku-4-5", 100_000, 0), 60_000);
        assert_eq!(
            c.trim_at_for("tiny", 16_000, 16_384),
            2_400,
            "a reserve as large as the window"
        );
        assert_eq!(
            c.trim_at_for("claude-haiku-4-5", 0, 16_384),
            95_000,
            "no window"
        );
        let c = Config::resolve(
            &env(&[("CONTEXT_TRIM_AT_FRACTION", "50%")]),
            None,
            &json!({}),
        );
        assert_eq!(c.trim_at_for("m", 24_000, 0), 12_000);
        let c = Config::resolve(&env(&[]), None, &json!({"trimAtFraction": 0.99}));
        assert_eq!(c.trim_at_fraction, DEFAULT_TRIM_AT_FRACTION);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    }

    #[test]
    fn shares_per_model_and_the_users_own_tokens() {
        let toml = "[context_proxy.trim_at]\n\"claude-*\" = \"70%\"\nqwen = 20000\nbad = \"lots\"\ntoo-much = \"150%\"\n";
        let c = Config::resolve(&env(&[]), Some(toml), &json!({}));
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert_eq!(c.trim_at_for("claude-opus-4", 200_000, 0), 140_000);
        assert_eq!(
            c.trim_at_for("claude-opus-4", 0, 0),
            125_000,
            "no window: the default entry"
        );
        assert_eq!(
            c.trim_at_for("qwen3-coder", 24_000, 0),
            20_000,
            "the user's tokens stand"
        );
        let shown = serde_json::to_value(&c.trim_at_table).unwrap();
        assert!(shown
            .as_array()
            .unwrap()
            .contains(&json!(["claude-*", "70%"])));
        let c = Config::resolve(
            &env(&[("CONTEXT_TRIM_AT_TOKENS", "8000")]),
            Some(toml),
            &json!({}),
        );
        assert_eq!(
            c.trim_at_for("claude-opus-4", 200_000, 0),
            8_000,
            "the override wins"
        );
    }

    #[test]
    fn known_windows_when_the_host_does_not_tell() {
        let toml =
            "[context_proxy.context_window]\n\"my-local-*\" = 32768\n\"claude-\" = 1000000\n";
        let c = Config::resolve(&env(&[]), Some(toml), &json!({}));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.window_for("gpt-5-codex", 0), 400_000);
        assert_eq!(
            c.window_for("gpt-5-codex", 64_000),
            64_000,
            "the host's word first"
        );
        assert_eq!(c.window_for("my-local-qwen", 0), 32_768);
        assert_eq!(
            c.window_for("claude-sonnet-4-5", 0),
            1_000_000,
            "config replaces"
        );
        assert_eq!(c.window_for("mystery", 0), 0);
        let c = Config::resolve(
            &env(&[]),
            Some("[context_proxy.context_window]\nx = \"big\"\n"),
            &json!({}),
        );
        assert_eq!(c.warnings.len(), 1);
    }

    #[test]
    fn glob_patterns() {
        assert!(pattern_matches("claude-*-4*", "claude-opus-4-1"));
        assert!(!pattern_matches("claude-*-4", "claude-opus-45x"));
        assert!(pattern_matches("haiku", "claude-haiku-4-5"));
    }
}
