//! Edits of TOML files that keep the user's comments and layout: `config.toml` for
//! `smarter-compact context set`, Codex's `config.toml` for `smarter-compact enable codex`.

use serde_json::Value;

use super::{first_line, TrimAt};

/// `config.toml` text with `[context_proxy.trim_at]` `pattern = value` set, everything else
/// (comments, order, other tables) kept as it was. `value` is whole tokens (`"120000"`) or a
/// share of the model's window (`"60%"`), as [`TrimAt::parse`] reads it.
pub fn set_trim_at(toml_text: &str, pattern: &str, value: &str) -> crate::Result<String> {
    let pattern = pattern.trim().to_ascii_lowercase();
    if pattern.is_empty() || pattern.len() > 200 || pattern.chars().any(char::is_control) {
        return Err(crate::Error::InvalidArgument(
            "the model pattern must be 1–200 printable characters".into(),
        ));
    }
    let item: toml_edit::Value = match TrimAt::parse(value) {
        Some(TrimAt::Tokens(t)) => i64::from(t).into(),
        Some(share @ TrimAt::Share(_)) => serde_json::to_value(share)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
            .into(),
        None => {
            return Err(crate::Error::InvalidArgument(format!(
                "the threshold must be whole tokens in 1000..=10000000 or a percentage of the window like 60%, got {value:?}"
            )))
        }
    };
    let mut doc: toml_edit::DocumentMut =
        toml_text.parse().map_err(|e: toml_edit::TomlError| {
            crate::Error::InvalidArgument(format!(
                "config.toml is not valid TOML: {}",
                first_line(&e.to_string())
            ))
        })?;
    let proxy = doc
        .entry("context_proxy")
        .or_insert(toml_edit::table())
        .as_table_mut()
        .ok_or_else(|| {
            crate::Error::InvalidArgument("context_proxy in config.toml is not a table".into())
        })?;
    proxy.set_implicit(true);
    let table = proxy
        .entry("trim_at")
        .or_insert(toml_edit::table())
        .as_table_mut()
        .ok_or_else(|| {
            crate::Error::InvalidArgument(
                "context_proxy.trim_at in config.toml is not a table".into(),
            )
        })?;
    match table
        .get_mut(pattern.as_str())
        .and_then(|i| i.as_value_mut())
    {
        // Keep the comment on the line being edited.
        Some(v) => {
            let decor = v.decor().clone();
            *v = item;
            *v.decor_mut() = decor;
        }
        None => table[pattern.as_str()] = toml_edit::value(item),
    }
    Ok(doc.to_string())
}

/// `config.toml`-style text with the key at `path` set to `value` (a string, number, boolean or
/// array of strings); tables on the way are created; everything else is kept as it was.
pub fn toml_set(text: &str, path: &[&str], value: &Value) -> crate::Result<String> {
    let (last, tables) = path
        .split_last()
        .ok_or_else(|| crate::Error::InvalidArgument("empty TOML path".into()))?;
    let mut doc = parse_doc(text)?;
    let mut table = doc.as_table_mut();
    for (k, name) in tables.iter().enumerate() {
        let entry = table.entry(name).or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            // Parents of a new table are written only through the child's header.
            t.set_implicit(k + 1 < tables.len());
            toml_edit::Item::Table(t)
        });
        table = entry
            .as_table_mut()
            .ok_or_else(|| crate::Error::InvalidArgument(format!("{name} is not a table")))?;
    }
    let v: toml_edit::Value = match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) if n.is_i64() => n.as_i64().unwrap_or_default().into(),
        Value::Number(n) => n.as_f64().unwrap_or_default().into(),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| crate::Error::InvalidArgument("only arrays of strings".into()))
            })
            .collect::<crate::Result<toml_edit::Array>>()?
            .into(),
        _ => {
            return Err(crate::Error::InvalidArgument(
                "unsupported TOML value".into(),
            ))
        }
    };
    table[*last] = toml_edit::Item::Value(v);
    Ok(doc.to_string())
}

/// `config.toml`-style text without the key or table at `path`; a parent table left empty by it
/// that the user never wrote as a `[header]` goes too.
pub fn toml_remove(text: &str, path: &[&str]) -> crate::Result<String> {
    fn remove(table: &mut toml_edit::Table, path: &[&str]) -> bool {
        match path {
            [] => false,
            [last] => table.remove(last).is_some(),
            [first, rest @ ..] => {
                let changed = table
                    .get_mut(first)
                    .and_then(|i| i.as_table_mut())
                    .is_some_and(|child| remove(child, rest));
                let emptied = table
                    .get(first)
                    .and_then(|i| i.as_table())
                    .is_some_and(|t| t.is_empty() && t.is_implicit());
                if changed && emptied {
                    table.remove(first);
                }
                changed
            }
        }
    }
    let mut doc = parse_doc(text)?;
    if !remove(doc.as_table_mut(), path) {
        return Ok(text.to_string());
    }
    Ok(doc.to_string())
}

fn parse_doc(text: &str) -> crate::Result<toml_edit::DocumentMut> {
    text.parse().map_err(|e: toml_edit::TomlError| {
        crate::Error::InvalidArgument(format!("not valid TOML: {}", first_line(&e.to_string())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn context_set_keeps_comments_and_other_keys() {
        let before = "# my settings\n[context_proxy]\ncompress_over_tokens = 3000 # lower\n\n[context_proxy.trim_at]\nhaiku = 90000\n\n[other]\nx = 1\n";
        let edited = set_trim_at(before, "haiku", "80000").unwrap();
        assert!(edited.contains("haiku = 80000\n"));
        assert_eq!(
            set_trim_at(
                "[context_proxy.trim_at]\nhaiku = 95000 # fast\n",
                "haiku",
                "90000"
            )
            .unwrap(),
            "[context_proxy.trim_at]\nhaiku = 90000 # fast\n"
        );
        let after = set_trim_at(before, "Claude-Sonnet-*", "180000").unwrap();
        assert!(after
            .starts_with("# my settings\n[context_proxy]\ncompress_over_tokens = 3000 # lower\n"));
        assert!(after.contains("haiku = 90000\n\"claude-sonnet-*\" = 180000\n"));
        assert!(after.contains("[other]\nx = 1"));
        let c = Config::resolve(&env(&[]), Some(&after), &json!({}));
        assert_eq!(c.trim_at_for("claude-sonnet-4", 0, 0), 180_000);
        assert_eq!(
            set_trim_at(&after, "claude-sonnet-*", "180000").unwrap(),
            after,
            "idempotent"
        );
        let fresh = set_trim_at("", "default", "100000").unwrap();
        assert_eq!(fresh, "[context_proxy.trim_at]\ndefault = 100000\n");
        assert_eq!(set_trim_at("", "x", "5").unwrap_err().code(), "E_ARG");
        assert_eq!(
            set_trim_at("[oops", "x", "5000").unwrap_err().code(),
            "E_ARG"
        );
        assert_eq!(set_trim_at("", "x", "150%").unwrap_err().code(), "E_ARG");
        let share = set_trim_at("", "claude-*", " 60% ").unwrap();
        assert_eq!(share, "[context_proxy.trim_at]\n\"claude-*\" = \"60%\"\n");
        let c = Config::resolve(&env(&[]), Some(&share), &json!({}));
        assert_eq!(c.trim_at_for("claude-opus-4", 200_000, 0), 120_000);
    }

    #[test]
    fn toml_set_then_remove_restores_the_text() {
        let user = "# my codex config\nmodel = \"gpt-5\" # fast\n\n[profiles.work]\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let mut t = toml_set(user, &["model_provider"], &json!("smarter-compact")).unwrap();
        t = toml_set(
            &t,
            &["model_providers", "smarter-compact", "base_url"],
            &json!("http://127.0.0.1:4101/v1"),
        )
        .unwrap();
        t = toml_set(
            &t,
            &["model_providers", "smarter-compact", "wire_api"],
            &json!("responses"),
        )
        .unwrap();
        t = toml_set(
            &t,
            &["mcp_servers", "smarter-compact", "args"],
            &json!(["cli.js", "mcp"]),
        )
        .unwrap();
        let parsed: toml::Table = t.parse().unwrap();
        assert_eq!(parsed["model_provider"].as_str(), Some("smarter-compact"));
        assert_eq!(
            parsed["model_providers"]["smarter-compact"]["wire_api"].as_str(),
            Some("responses")
        );
        assert!(t.starts_with("# my codex config\nmodel = \"gpt-5\" # fast\n"));
        let mut back = toml_remove(&t, &["mcp_servers", "smarter-compact"]).unwrap();
        back = toml_remove(&back, &["model_providers", "smarter-compact"]).unwrap();
        back = toml_remove(&back, &["model_provider"]).unwrap();
        assert_eq!(back, user, "byte for byte");
        assert_eq!(toml_remove(user, &["nope", "x"]).unwrap(), user);
    }
}
