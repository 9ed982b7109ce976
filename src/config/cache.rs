//! The prompt cache's lifetime per model, for cache-cold cuts: after an idle gap longer than
//! it, the provider has dropped the cached prefix, so the next request is a full cache write
//! whether it is cut or not.

use super::threshold::pattern_matches;
use super::Config;

/// Built-in lifetimes in seconds (pattern, seconds): the providers' default prompt-cache TTL of
/// five minutes. `[context_proxy.cache_ttl]` adds or replaces entries; 0 turns cache-cold cuts
/// off for the models it matches.
pub(super) const BUILTIN_CACHE_TTL: [(&str, u32); 1] = [("default", 300)];

/// The longest lifetime accepted: a day.
const MAX_TTL_SECONDS: u32 = 86_400;

impl Config {
    /// The prompt cache's lifetime for a model in milliseconds: what the host told (`told_ms`,
    /// e.g. an hour when the request asks for the long TTL; 0 when it did not say), else the
    /// most specific pattern of the table, else its `default` entry. 0: never cache-cold.
    pub fn cache_ttl_ms_for(&self, model: &str, told_ms: u64) -> u64 {
        if told_ms > 0 {
            return told_ms;
        }
        let model = model.to_ascii_lowercase();
        let specific = self
            .cache_ttl_table
            .iter()
            .filter(|(p, _)| p != "default" && pattern_matches(p, &model))
            .max_by_key(|(p, _)| p.len());
        let entry = specific.or_else(|| self.cache_ttl_table.iter().find(|(p, _)| p == "default"));
        entry.map_or(0, |(_, s)| u64::from(*s) * 1000)
    }

    /// Reads `[context_proxy.cache_ttl]` of one file: seconds as a number, or `"5m"`, `"1h"`,
    /// `"300s"`; entries replace the same patterns of earlier files.
    pub(super) fn read_cache_ttl_table(&mut self, file: &str, table: &toml::Value) {
        let Some(table) = table.as_table() else {
            self.warn(format!(
                "{file} [context_proxy.cache_ttl] is not a table; ignored"
            ));
            return;
        };
        for (pattern, v) in table {
            let seconds = match v {
                toml::Value::Integer(i) => u32::try_from(*i).ok(),
                toml::Value::String(s) => parse_duration(s),
                _ => None,
            };
            match seconds.filter(|s| *s <= MAX_TTL_SECONDS) {
                Some(s) => {
                    let pattern = pattern.to_ascii_lowercase();
                    self.cache_ttl_table.retain(|(p, _)| *p != pattern);
                    self.origins.insert(format!("cache_ttl.{pattern}"), file.to_string());
                    self.cache_ttl_table.push((pattern, s));
                }
                None => self.warn(format!("{file} cache_ttl {pattern:?} = {v} is not a duration like 300, \"5m\" or \"1h\" (at most a day); ignored")),
            }
        }
    }
}

/// `"300"`, `"300s"`, `"5m"`, `"1h"` → seconds.
fn parse_duration(raw: &str) -> Option<u32> {
    let raw = raw.trim();
    let (digits, unit) = match raw.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => raw.split_at(at),
        None => (raw, "s"),
    };
    let n: u32 = digits.parse().ok()?;
    let unit = match unit.trim() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return None,
    };
    n.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::super::tests::env;
    use super::super::{Config, ConfigFile};
    use serde_json::json;

    #[test]
    fn five_minutes_by_default_the_hosts_word_first_then_the_table() {
        let c = Config::resolve(&env(&[]), None, &json!({}));
        assert_eq!(c.cache_ttl_ms_for("claude-sonnet-4-5", 0), 300_000);
        assert_eq!(
            c.cache_ttl_ms_for("claude-sonnet-4-5", 3_600_000),
            3_600_000
        );
        let text = "[context_proxy.cache_ttl]\n\"claude-*\" = \"1h\"\nlocal = 0\ngpt = \"10m\"\nbad = \"soon\"\n";
        let files = [ConfigFile {
            label: "config.toml",
            text,
        }];
        let c = Config::resolve_files(&env(&[]), &files, &json!({}));
        assert_eq!(c.cache_ttl_ms_for("claude-opus-4", 0), 3_600_000);
        assert_eq!(c.cache_ttl_ms_for("my-local-model", 0), 0, "0 turns it off");
        assert_eq!(c.cache_ttl_ms_for("gpt-5", 0), 600_000);
        assert_eq!(c.cache_ttl_ms_for("qwen", 0), 300_000);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert_eq!(c.origins["cache_ttl.claude-*"], "config.toml");
    }
}
