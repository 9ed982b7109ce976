//! Configuration: built-in defaults, then the user's `config.toml`, then the project's
//! `.smarter-compact.toml`, then the environment, then the options the host passes (later wins).
//! An invalid value never fails a request: the default is used and a warning is kept for
//! `context_status` and the request stats. Where each value in force came from is kept too.

use std::collections::BTreeMap;

#[cfg(feature = "edit")]
mod edit;

mod cache;
mod threshold;

use cache::BUILTIN_CACHE_TTL;
#[cfg(feature = "edit")]
pub use edit::{set_trim_at, toml_remove, toml_set};
pub use threshold::{TrimAt, DEFAULT_TRIM_AT_FRACTION};
use threshold::{BUILTIN_TRIM_AT, KNOWN_WINDOWS};

use serde_json::Value;

/// Everything the engine reads from configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Config {
    /// One threshold for every model (`CONTEXT_TRIM_AT_TOKENS`), overriding the table.
    pub trim_at_override: Option<u32>,
    /// Per-model thresholds: lower-case pattern (`*` globs, otherwise substring) → tokens or a
    /// share of the window.
    pub trim_at_table: Vec<(String, TrimAt)>,
    /// A built-in threshold is capped at this fraction of the usable window (the window less
    /// the host's reserve), when the window is known (`CONTEXT_TRIM_AT_FRACTION`).
    pub trim_at_fraction: f64,
    /// Context windows by model pattern, used when the host does not tell the window.
    pub window_table: Vec<(String, u32)>,
    /// The in-flight turn is trimmed to this fraction of the threshold (`CONTEXT_TRIM_TO_FRACTION`).
    pub trim_to_fraction: f64,
    /// Tool results above this many tokens are compressed (`CONTEXT_COMPRESS_OVER_TOKENS`).
    pub compress_over_tokens: u32,
    /// Recall from a memory bank on trim (`CONTEXT_COMPACTION_RECALL`).
    pub compaction_recall: bool,
    /// Tell the user in the host's UI about each new cut (`CONTEXT_NOTIFY`, on by default).
    pub notify: bool,
    /// Subagent sessions (OpenCode's task-tool children, Claude Code's subagents through the
    /// proxy) are trimmed too (`CONTEXT_SUBAGENTS`, on by default); off leaves them alone.
    pub subagents: bool,
    /// The prompt cache's lifetime in seconds by model pattern (0: never cache-cold), for
    /// cache-cold cuts.
    pub cache_ttl_table: Vec<(String, u32)>,
    /// Tool exchanges of the in-flight turn that always stay.
    pub keep_last_exchanges: usize,
    /// A trim must free at least this fraction of the threshold (loop guard).
    pub min_free_fraction: f64,
    /// Tools whose results are never compressed nor trimmed out of the in-flight turn.
    pub protected_tools: Vec<String>,
    /// Name of the memory bank (`banks/<name>.db`) used for coverage, episodes and recall.
    pub memory_bank: Option<String>,
    /// The digest after the pointer may take this fraction of the threshold
    /// (`CONTEXT_DIGEST_FRACTION`; 0: no digest).
    pub digest_fraction: f64,
    /// What the digest holds (`CONTEXT_DIGEST_PARTS`: `users,toc,files,todo,names`).
    pub digest_parts: crate::digest::Parts,
    /// When a cut is made, kept tool results that a later kept one supersedes (the same call
    /// with the same output, a file read again) are sent as a reference to it
    /// (`CONTEXT_SUPERSEDE`, on by default).
    pub supersede: bool,
    /// What was invalid and replaced by its default.
    pub warnings: Vec<String>,
    /// Where each value that is not the built-in one came from: the key as `config.toml`
    /// spells it (`trim_to_fraction`, `trim_at.<pattern>`, `context_window.<pattern>`) → the
    /// file's label, the environment variable or `option <name>`.
    pub origins: BTreeMap<String, String>,
}

/// One configuration file's text and the label it is shown under (`config.toml`,
/// `.smarter-compact.toml`); later files override earlier ones.
#[derive(Debug, Clone, Copy)]
pub struct ConfigFile<'a> {
    /// How warnings and `origins` name the file.
    pub label: &'a str,
    /// Its TOML text.
    pub text: &'a str,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            trim_at_override: None,
            trim_at_table: BUILTIN_TRIM_AT
                .iter()
                .map(|(p, t)| (p.to_string(), TrimAt::Tokens(*t)))
                .collect(),
            trim_at_fraction: DEFAULT_TRIM_AT_FRACTION,
            window_table: KNOWN_WINDOWS
                .iter()
                .map(|(p, t)| (p.to_string(), *t))
                .collect(),
            trim_to_fraction: 0.3,
            compress_over_tokens: 4_000,
            compaction_recall: false,
            notify: true,
            subagents: true,
            cache_ttl_table: BUILTIN_CACHE_TTL
                .iter()
                .map(|(p, s)| (p.to_string(), *s))
                .collect(),
            keep_last_exchanges: 3,
            min_free_fraction: 0.1,
            protected_tools: Vec::new(),
            memory_bank: None,
            digest_fraction: 0.05,
            digest_parts: crate::digest::Parts::ALL,
            supersede: true,
            warnings: Vec::new(),
            origins: BTreeMap::new(),
        }
    }
}

/// Environment variables the engine reads (the host passes them in; the core never reads the
/// process environment itself).
pub const ENV_KEYS: [&str; 11] = [
    "CONTEXT_TRIM_AT_TOKENS",
    "CONTEXT_TRIM_AT_FRACTION",
    "CONTEXT_TRIM_TO_FRACTION",
    "CONTEXT_COMPRESS_OVER_TOKENS",
    "CONTEXT_COMPACTION_RECALL",
    "CONTEXT_MEMORY_BANK",
    "CONTEXT_NOTIFY",
    "CONTEXT_SUBAGENTS",
    "CONTEXT_DIGEST_FRACTION",
    "CONTEXT_DIGEST_PARTS",
    "CONTEXT_SUPERSEDE",
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
const WINDOW_FRACTION: Key = Key {
    env: "CONTEXT_TRIM_AT_FRACTION",
    toml: "trim_at_fraction",
    camel: "trimAtFraction",
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
const NOTIFY: Key = Key {
    env: "CONTEXT_NOTIFY",
    toml: "notify",
    camel: "notify",
};
const SUBAGENTS: Key = Key {
    env: "CONTEXT_SUBAGENTS",
    toml: "subagents",
    camel: "subagents",
};
const DIGEST_FRACTION: Key = Key {
    env: "CONTEXT_DIGEST_FRACTION",
    toml: "digest_fraction",
    camel: "digestFraction",
};
const DIGEST_PARTS: Key = Key {
    env: "CONTEXT_DIGEST_PARTS",
    toml: "digest_parts",
    camel: "digestParts",
};
const SUPERSEDE: Key = Key {
    env: "CONTEXT_SUPERSEDE",
    toml: "supersede",
    camel: "supersede",
};
const RECALL: Key = Key {
    env: "CONTEXT_COMPACTION_RECALL",
    toml: "compaction_recall",
    camel: "compactionRecall",
};

impl Config {
    /// Resolves the configuration from the user's `config.toml` text, environment variables and
    /// host options (a JSON object with camelCase or snake_case keys).
    pub fn resolve(
        env: &BTreeMap<String, String>,
        toml_text: Option<&str>,
        options: &Value,
    ) -> Config {
        let files: Vec<ConfigFile> = toml_text
            .map(|text| ConfigFile {
                label: "config.toml",
                text,
            })
            .into_iter()
            .collect();
        Config::resolve_files(env, &files, options)
    }

    /// Resolves the configuration from configuration files (each over the ones before it), then
    /// environment variables, then host options.
    pub fn resolve_files(
        env: &BTreeMap<String, String>,
        files: &[ConfigFile],
        options: &Value,
    ) -> Config {
        let mut c = Config::default();
        // Each file's `[context_proxy]` section, in order.
        let mut sections: Vec<(&str, toml::Table)> = Vec::new();
        for file in files {
            match file.text.parse::<toml::Table>() {
                Ok(t) => sections.push((
                    file.label,
                    t.get("context_proxy")
                        .and_then(|v| v.as_table())
                        .cloned()
                        .unwrap_or_default(),
                )),
                Err(e) => c.warn(format!(
                    "{} is not valid TOML ({}); ignored",
                    file.label,
                    first_line(&e.to_string())
                )),
            }
        }
        for (label, section) in &sections {
            if let Some(table) = section.get("trim_at") {
                c.read_trim_table(label, table);
            }
            if let Some(table) = section.get("context_window") {
                c.read_window_table(label, table);
            }
            if let Some(table) = section.get("cache_ttl") {
                c.read_cache_ttl_table(label, table);
            }
        }
        // Each value: the last source that has it wins; each source's value is checked.
        let sources = |key: &Key| -> Vec<(String, String)> {
            let mut found = Vec::new();
            for (label, section) in &sections {
                if let Some(v) = section.get(key.toml) {
                    found.push((format!("{label} {}", key.toml), toml_scalar(v)));
                }
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
                Some(v) => {
                    c.trim_at_override = Some(v);
                    c.origins.insert(TRIM_AT.toml.into(), src);
                }
                None => c.warn(format!(
                    "{src}={raw:?} is not a whole number of tokens in 1000..=10000000; ignored"
                )),
            }
        }
        for (src, raw) in sources(&WINDOW_FRACTION) {
            match parse_share(&raw).filter(|f| (0.1..=0.95).contains(f)) {
                Some(v) => {
                    c.trim_at_fraction = v;
                    c.origins.insert(WINDOW_FRACTION.toml.into(), src);
                }
                None => c.warn(format!(
                    "{src}={raw:?} is not a fraction (or percentage) of the window in 0.1..=0.95; using {}",
                    c.trim_at_fraction
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
                Some(v) => {
                    c.trim_to_fraction = v;
                    c.origins.insert(FRACTION.toml.into(), src);
                }
                None => c.warn(format!(
                    "{src}={raw:?} is not a fraction in 0.05..=0.9; using {}",
                    c.trim_to_fraction
                )),
            }
        }
        for (src, raw) in sources(&COMPRESS) {
            match parse_int(&raw, 200, 10_000_000) {
                Some(v) => {
                    c.compress_over_tokens = v;
                    c.origins.insert(COMPRESS.toml.into(), src);
                }
                None => c.warn(format!(
                    "{src}={raw:?} is not a whole number of tokens in 200..=10000000; using {}",
                    c.compress_over_tokens
                )),
            }
        }
        for (src, raw) in sources(&RECALL) {
            let Some(on) = parse_switch(&raw) else {
                c.warn(format!("{src}={raw:?} is not 0 or 1; recall stays off"));
                continue;
            };
            c.compaction_recall = on;
            c.origins.insert(RECALL.toml.into(), src);
        }
        for (key, what) in [
            (&NOTIFY, "notices"),
            (&SUBAGENTS, "subagent trimming"),
            (&SUPERSEDE, "supersession"),
        ] {
            for (src, raw) in sources(key) {
                let Some(on) = parse_switch(&raw) else {
                    c.warn(format!("{src}={raw:?} is not 0 or 1; {what} unchanged"));
                    continue;
                };
                match key.toml {
                    "notify" => c.notify = on,
                    "supersede" => c.supersede = on,
                    _ => c.subagents = on,
                }
                c.origins.insert(key.toml.into(), src);
            }
        }
        for (src, raw) in sources(&DIGEST_FRACTION) {
            match parse_share(&raw).filter(|f| (0.0..=0.2).contains(f)) {
                Some(v) => {
                    c.digest_fraction = v;
                    c.origins.insert(DIGEST_FRACTION.toml.into(), src);
                }
                None => c.warn(format!(
                    "{src}={raw:?} is not a fraction of the threshold in 0..=0.2; using {}",
                    c.digest_fraction
                )),
            }
        }
        for (src, raw) in sources(&DIGEST_PARTS) {
            match crate::digest::Parts::parse(&raw) {
                Some(p) => {
                    c.digest_parts = p;
                    c.origins.insert(DIGEST_PARTS.toml.into(), src);
                }
                None => c.warn(format!(
                    "{src}={raw:?} is not a list of users, toc, files, todo (or all, none); using {}",
                    c.digest_parts.names()
                )),
            }
        }
        for (src, raw) in sources(&BANK) {
            match crate::store::validate_id(raw.trim()) {
                Ok(()) => {
                    c.memory_bank = Some(raw.trim().to_string());
                    c.origins.insert(BANK.toml.into(), src);
                }
                Err(e) => c.warn(format!(
                    "{src}={raw:?} is not a usable bank name ({e}); no memory bank"
                )),
            }
        }
        for (label, section) in &sections {
            let v = section.get("protected_tools").map(toml_to_json);
            c.read_protected(label, v.as_ref());
        }
        let from_host = options
            .get("protectedTools")
            .map(|v| ("option protectedTools", v));
        let from_host = from_host.or(options
            .get("protected_tools")
            .map(|v| ("option protected_tools", v)));
        if let Some((name, v)) = from_host {
            c.read_protected(name, Some(v));
        }
        c
    }

    fn warn(&mut self, w: String) {
        self.warnings.push(w);
    }

    fn read_protected(&mut self, origin: &str, v: Option<&Value>) {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return;
        };
        match v
            .as_array()
            .map(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        {
            Some(Some(names)) => {
                self.protected_tools = names.into_iter().map(str::to_string).collect();
                self.origins
                    .insert("protected_tools".into(), origin.to_string());
            }
            _ => self.warn(format!(
                "{origin} protected tools must be a list of tool names; ignored"
            )),
        }
    }
}

/// `1`/`true`/`on`/`yes` or `0`/`false`/`off`/`no`/empty.
fn parse_switch(raw: &str) -> Option<bool> {
    match raw.trim() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" | "" => Some(false),
        _ => None,
    }
}

/// `"0.6"` or `"60%"` → 0.6.
fn parse_share(raw: &str) -> Option<f64> {
    let raw = raw.trim();
    let v = match raw.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().ok()? / 100.0,
        None => raw.parse::<f64>().ok()?,
    };
    v.is_finite().then_some(v)
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

    pub(super) fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_follow_the_seed() {
        let c = Config::resolve(&env(&[]), None, &json!({}));
        assert_eq!(c.trim_at_for("claude-haiku-4-5", 0, 0), 95_000);
        assert_eq!(c.trim_at_for("gpt-5", 0, 0), 125_000);
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
        assert_eq!(c.trim_at_for("x", 0, 0), 125_000);
        assert_eq!(c.trim_to_fraction, 0.3);
        assert_eq!(c.compress_over_tokens, 4_000);
        assert!(!c.compaction_recall);
        assert_eq!(c.warnings.len(), 5, "{:?}", c.warnings);
    }

    #[test]
    fn the_project_file_over_the_users_with_origins() {
        let user = "[context_proxy]\ntrim_to_fraction = 0.4\ncompress_over_tokens = 3000\n[context_proxy.trim_at]\nqwen = 30000\nhaiku = 90000\n";
        let project = "[context_proxy]\ntrim_to_fraction = 0.2\nprotected_tools = [\"todowrite\"]\n[context_proxy.trim_at]\nqwen = \"50%\"\n";
        let files = [
            ConfigFile {
                label: "config.toml",
                text: user,
            },
            ConfigFile {
                label: ".smarter-compact.toml",
                text: project,
            },
        ];
        let c = Config::resolve_files(&env(&[]), &files, &json!({}));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.trim_to_fraction, 0.2);
        assert_eq!(c.compress_over_tokens, 3_000);
        assert_eq!(c.trim_at_for("qwen3", 32_000, 0), 16_000);
        assert_eq!(c.trim_at_for("claude-haiku-4-5", 0, 0), 90_000);
        assert_eq!(c.protected_tools, ["todowrite"]);
        let origin = |k: &str| c.origins.get(k).map(String::as_str);
        assert_eq!(
            origin("trim_to_fraction"),
            Some(".smarter-compact.toml trim_to_fraction")
        );
        assert_eq!(
            origin("compress_over_tokens"),
            Some("config.toml compress_over_tokens")
        );
        assert_eq!(origin("trim_at.qwen"), Some(".smarter-compact.toml"));
        assert_eq!(origin("trim_at.haiku"), Some("config.toml"));
        assert_eq!(origin("protected_tools"), Some(".smarter-compact.toml"));
        assert_eq!(origin("trim_at.default"), None, "built in");
        let c = Config::resolve_files(
            &env(&[("CONTEXT_TRIM_TO_FRACTION", "0.5")]),
            &files,
            &json!({"compressOverTokens": 900}),
        );
        assert_eq!(c.trim_to_fraction, 0.5);
        assert_eq!(c.origins["trim_to_fraction"], "CONTEXT_TRIM_TO_FRACTION");
        assert_eq!(c.compress_over_tokens, 900);
        assert_eq!(
            c.origins["compress_over_tokens"],
            "option compressOverTokens"
        );
        let broken = [ConfigFile {
            label: ".smarter-compact.toml",
            text: "[oops",
        }];
        let c = Config::resolve_files(&env(&[]), &broken, &json!({}));
        assert!(c.warnings[0].starts_with(".smarter-compact.toml is not valid TOML"));
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
        assert_eq!(c.trim_at_for("claude-sonnet-4", 0, 0), 180_000);
        assert_eq!(c.trim_at_for("claude-3-5-haiku", 0, 0), 90_000);
        let c = Config::resolve(
            &env(&[("CONTEXT_TRIM_AT_TOKENS", "8000")]),
            Some(toml),
            &json!({}),
        );
        assert_eq!(c.trim_at_for("claude-sonnet-4", 0, 0), 8_000);
        let c = Config::resolve(&env(&[]), None, &json!({"trim_at_tokens": 6000}));
        assert_eq!(c.trim_at_for("anything", 0, 0), 6_000);
    }
}
