//! Configuration: built-in defaults, then `config.toml`, then the environment, then the options
//! the host passes (later wins). An invalid value never fails a request: the default is used and
//! a warning is kept for `context_status` and the request stats.

use std::collections::BTreeMap;

#[cfg(feature = "edit")]
mod edit;

#[cfg(feature = "edit")]
pub use edit::{set_trim_at, toml_remove, toml_set};

use serde_json::Value;

/// Built-in per-model thresholds (pattern, tokens): the seed's table.
const BUILTIN_TRIM_AT: [(&str, u32); 2] = [("haiku", 95_000), ("default", 125_000)];

/// Everything the engine reads from configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Config {
    /// One threshold for every model (`CONTEXT_TRIM_AT_TOKENS`), overriding the table.
    pub trim_at_override: Option<u32>,
    /// Per-model thresholds: lower-case pattern (`*` globs, otherwise substring) → tokens.
    pub trim_at_table: Vec<(String, u32)>,
    /// The in-flight turn is trimmed to this fraction of the threshold (`CONTEXT_TRIM_TO_FRACTION`).
    pub trim_to_fraction: f64,
    /// Tool results above this many tokens are compressed (`CONTEXT_COMPRESS_OVER_TOKENS`).
    pub compress_over_tokens: u32,
    /// Recall from a memory bank on trim (`CONTEXT_COMPACTION_RECALL`).
    pub compaction_recall: bool,
    /// Tool exchanges of the in-flight turn that always stay.
    pub keep_last_exchanges: usize,
    /// A trim must free at least this fraction of the threshold (loop guard).
    pub min_free_fraction: f64,
    /// Tools whose results are never compressed nor trimmed out of the in-flight turn.
    pub protected_tools: Vec<String>,
    /// Name of the memory bank (`banks/<name>.db`) used for coverage, episodes and recall.
    pub memory_bank: Option<String>,
    /// What was invalid and replaced by its default.
    pub warnings: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            trim_at_override: None,
            trim_at_table: BUILTIN_TRIM_AT
                .iter()
                .map(|(p, t)| (p.to_string(), *t))
                .collect(),
            trim_to_fraction: 0.3,
            compress_over_tokens: 4_000,
            compaction_recall: false,
            keep_last_exchanges: 3,
            min_free_fraction: 0.1,
            protected_tools: Vec::new(),
            memory_bank: None,
            warnings: Vec::new(),
        }
    }
}

/// Environment variables the engine reads (the host passes them in; the core never reads the
/// process environment itself).
pub const ENV_KEYS: [&str; 5] = [
    "CONTEXT_TRIM_AT_TOKENS",
    "CONTEXT_TRIM_TO_FRACTION",
    "CONTEXT_COMPRESS_OVER_TOKENS",
    "CONTEXT_COMPACTION_RECALL",
    "CONTEXT_MEMORY_BANK",
];

/// One configurable value: its names in each source and how to check it.
struct Key {
    env: &'static str,
    toml: &'static str,
    camel: &'static str,
}

const TRIM_AT: Key = Key {
    env: "CONTEXT_TRIM_AT_TOKENS",
    toml: "trim_at_tokens",
    camel: "trimAtTokens",
};
const FRACTION: Key = Key {
    env: "CONTEXT_TRIM_TO_FRACTION",
    toml: "trim_to_fraction",
    camel: "trimToFraction",
};
const COMPRESS: Key = Key {
    env: "CONTEXT_COMPRESS_OVER_TOKENS",
    toml: "compress_over_tokens",
    camel: "compressOverTokens",
};
const BANK: Key = Key {
    env: "CONTEXT_MEMORY_BANK",
    toml: "memory_bank",
    camel: "memoryBank",
};
const RECALL: Key = Key {
    env: "CONTEXT_COMPACTION_RECALL",
    toml: "compaction_recall",
    camel: "compactionRecall",
};

impl Config {
    /// Resolves the configuration from `config.toml` text, environment variables and host
    /// options (a JSON object with camelCase or snake_case keys).
    pub fn resolve(
        env: &BTreeMap<String, String>,
        toml_text: Option<&str>,
        options: &Value,
    ) -> Config {
        let mut c = Config::default();
        let mut section = toml::Table::new();
        if let Some(text) = toml_text {
            match text.parse::<toml::Table>() {
                Ok(t) => {
                    section = t
                        .get("context_proxy")
                        .and_then(|v| v.as_table())
                        .cloned()
                        .unwrap_or_default();
                }
                Err(e) => c.warn(format!(
                    "config.toml is not valid TOML ({}); ignored",
                    first_line(&e.to_string())
                )),
            }
        }
        if let Some(table) = section.get("trim_at") {
            c.read_trim_table(table);
        }
        // Each value: the last source that has it wins; each source's value is checked.
        let sources = |key: &Key| -> Vec<(String, String)> {
            let mut found = Vec::new();
            if let Some(v) = section.get(key.toml) {
                found.push((format!("config.toml {}", key.toml), toml_scalar(v)));
            }
            if let Some(v) = env.get(key.env) {
                if !v.trim().is_empty() {
                    found.push((key.env.to_string(), v.clone()));
                }
            }
            for name in [key.camel, key.toml] {
                if let Some(v) = options.get(name).filter(|v| !v.is_null()) {
                    found.push((format!("option {name}"), json_scalar(v)));
                }
            }
            found
        };
        for (src, raw) in sources(&TRIM_AT) {
            match parse_int(&raw, 1_000, 10_000_000) {
                Some(v) => c.trim_at_override = Some(v),
                None => c.warn(format!(
                    "{src}={raw:?} is not a whole number of tokens in 1000..=10000000; ignored"
                )),
            }
        }
        for (src, raw) in sources(&FRACTION) {
            match raw
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| (0.05..=0.9).contains(f))
            {
                Some(v) => c.trim_to_fraction = v,
                None => c.warn(format!(
                    "{src}={raw:?} is not a fraction in 0.05..=0.9; using {}",
                    c.trim_to_fraction
                )),
            }
        }
        for (src, raw) in sources(&COMPRESS) {
            match parse_int(&raw, 200, 10_000_000) {
                Some(v) => c.compress_over_tokens = v,
                None => c.warn(format!(
                    "{src}={raw:?} is not a whole number of tokens in 200..=10000000; using {}",
                    c.compress_over_tokens
                )),
            }
        }
        for (src, raw) in sources(&RECALL) {
            match raw.trim() {
                "1" | "true" | "on" | "yes" => c.compaction_recall = true,
                "0" | "false" | "off" | "no" | "" => c.compaction_recall = false,
                _ => c.warn(format!("{src}={raw:?} is not 0 or 1; recall stays off")),
            }
        }
        for (src, raw) in sources(&BANK) {
            match crate::store::validate_id(raw.trim()) {
                Ok(()) => c.memory_bank = Some(raw.trim().to_string()),
                Err(e) => c.warn(format!(
                    "{src}={raw:?} is not a usable bank name ({e}); no memory bank"
                )),
            }
        }
        c.read_protected(section.get("protected_tools").map(toml_to_json).as_ref());
        c.read_protected(
            options
                .get("protectedTools")
                .or(options.get("protected_tools")),
        );
        c
    }

    /// The threshold for a model: the global override, else the most specific matching pattern
    /// of the table, else its `default` entry.
    pub fn trim_at_for(&self, model: &str) -> u32 {
        if let Some(t) = self.trim_at_override {
            return t;
        }
        let model = model.to_ascii_lowercase();
        let mut best: Option<(usize, u32)> = None;
        for (pattern, tokens) in &self.trim_at_table {
            if pattern != "default"
                && pattern_matches(pattern, &model)
                && best.is_none_or(|(len, _)| pattern.len() > len)
            {
                best = Some((pattern.len(), *tokens));
            }
        }
        best.map(|(_, t)| t).unwrap_or_else(|| {
            self.trim_at_table
                .iter()
                .find(|(p, _)| p == "default")
                .map_or(125_000, |(_, t)| *t)
        })
    }

    fn warn(&mut self, w: String) {
        self.warnings.push(w);
    }

    fn read_trim_table(&mut self, table: &toml::Value) {
        let Some(table) = table.as_table() else {
            self.warn("config.toml [context_proxy.trim_at] is not a table; ignored".into());
            return;
        };
        for (pattern, v) in table {
            match v.as_integer().and_then(|i| parse_int(&i.to_string(), 1_000, 10_000_000)) {
                Some(tokens) => {
                    let pattern = pattern.to_ascii_lowercase();
                    self.trim_at_table.retain(|(p, _)| *p != pattern);
                    self.trim_at_table.push((pattern, tokens));
                }
                None => self.warn(format!("config.toml trim_at {pattern:?} = {v} is not a whole number of tokens in 1000..=10000000; ignored")),
            }
        }
    }

    fn read_protected(&mut self, v: Option<&Value>) {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return;
        };
        match v
            .as_array()
            .map(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        {
            Some(Some(names)) => {
                self.protected_tools = names.into_iter().map(str::to_string).collect()
            }
            _ => self.warn("protected tools must be a list of tool names; ignored".into()),
        }
    }
}

/// `*` matches any run of characters; a pattern without `*` matches as a substring.
fn pattern_matches(pattern: &str, model: &str) -> bool {
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

pub(crate) fn parse_int(raw: &str, min: u32, max: u32) -> Option<u32> {
    let raw = raw.trim().replace('_', "");
    let v: u64 = raw.parse().ok()?;
    u32::try_from(v).ok().filter(|v| (min..=max).contains(v))
}

fn toml_scalar(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn json_scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::String(s) => Value::String(s.clone()),
        other => Value::String(other.to_string()),
    }
}

pub(crate) fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_follow_the_seed() {
        let c = Config::resolve(&env(&[]), None, &json!({}));
        assert_eq!(c.trim_at_for("claude-haiku-4-5"), 95_000);
        assert_eq!(c.trim_at_for("gpt-5"), 125_000);
        assert_eq!(c.trim_to_fraction, 0.3);
        assert_eq!(c.compress_over_tokens, 4_000);
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn invalid_values_fall_back_with_a_warning() {
        let e = env(&[
            ("CONTEXT_TRIM_AT_TOKENS", "lots"),
            ("CONTEXT_TRIM_TO_FRACTION", "3"),
            ("CONTEXT_COMPRESS_OVER_TOKENS", "-5"),
            ("CONTEXT_COMPACTION_RECALL", "maybe"),
        ]);
        let c = Config::resolve(&e, Some("not [toml"), &json!({}));
        assert_eq!(c.trim_at_for("x"), 125_000);
        assert_eq!(c.trim_to_fraction, 0.3);
        assert_eq!(c.compress_over_tokens, 4_000);
        assert!(!c.compaction_recall);
        assert_eq!(c.warnings.len(), 5, "{:?}", c.warnings);
    }

    #[test]
    fn options_beat_env_beat_toml() {
        let toml = "[context_proxy]\ncompress_over_tokens = 1000\n[context_proxy.trim_at]\n\"claude-sonnet-*\" = 180000\nhaiku = 90000\n";
        let c = Config::resolve(
            &env(&[("CONTEXT_COMPRESS_OVER_TOKENS", "2000")]),
            Some(toml),
            &json!({"trimToFraction": 0.5}),
        );
        assert_eq!(c.compress_over_tokens, 2_000);
        assert_eq!(c.trim_to_fraction, 0.5);
        assert_eq!(c.trim_at_for("claude-sonnet-4"), 180_000);
        assert_eq!(c.trim_at_for("claude-3-5-haiku"), 90_000);
        let c = Config::resolve(
            &env(&[("CONTEXT_TRIM_AT_TOKENS", "8000")]),
            Some(toml),
            &json!({}),
        );
        assert_eq!(c.trim_at_for("claude-sonnet-4"), 8_000);
        let c = Config::resolve(&env(&[]), None, &json!({"trim_at_tokens": 6000}));
        assert_eq!(c.trim_at_for("anything"), 6_000);
    }

    #[test]
    fn glob_patterns() {
        assert!(pattern_matches("claude-*-4*", "claude-opus-4-1"));
        assert!(!pattern_matches("claude-*-4", "claude-opus-45x"));
        assert!(pattern_matches("haiku", "claude-haiku-4-5"));
    }
}
