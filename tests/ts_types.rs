//! The TypeScript declarations of the engine's values (`src/wasm/types.d.ts`, emitted into
//! `pkg/smarter_compact.d.ts`) against what the core really serialises: every key of every
//! value is declared, every required key is present, and every value has its declared type.
//! The values come from a real engine over SQLite replaying a real session.

mod common;

use std::collections::BTreeMap;

use common::store_env::{sql_engine, temp_db};
use common::{load_sessions, requests};
use serde_json::{json, Value};
use smarter_compact::config::ENV_KEYS;
use smarter_compact::error::ERROR_CODES;
use smarter_compact::format::Format;
use smarter_compact::memory::compact_context::{compact_context, Signals};
use smarter_compact::store::{render_hits, Scope, SqlRows};
use smarter_compact::TransformOptions;

const TYPES: &str = include_str!("../src/wasm/types.d.ts");

/// One member of an interface: its name, whether it is optional, its type text.
type Member = (String, bool, String);

/// The declarations of a `.d.ts` text: type aliases and interfaces (methods are skipped).
struct Decls {
    aliases: BTreeMap<String, String>,
    interfaces: BTreeMap<String, Vec<Member>>,
}

/// The text without `//` and `/* */` comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Splits at `sep` outside brackets and string literals.
fn split_top(text: &str, sep: char) -> Vec<String> {
    let (mut parts, mut cur, mut depth, mut quoted) = (Vec::new(), String::new(), 0i32, false);
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            '[' | '(' | '<' | '{' if !quoted => depth += 1,
            ']' | ')' | '>' | '}' if !quoted => depth -= 1,
            _ if c == sep && depth == 0 && !quoted => {
                parts.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur.trim().to_string());
    parts.retain(|p| !p.is_empty());
    parts
}

fn parse(text: &str) -> Decls {
    let text = strip_comments(text);
    let mut decls = Decls {
        aliases: BTreeMap::new(),
        interfaces: BTreeMap::new(),
    };
    for chunk in text.split("export ").skip(1) {
        if let Some(rest) = chunk.strip_prefix("type ") {
            let (name, def) = rest.split_once('=').expect("type alias");
            let def = def
                .trim()
                .trim_end_matches(';')
                .trim()
                .trim_start_matches('|');
            decls
                .aliases
                .insert(name.trim().to_string(), def.trim().to_string());
        } else if let Some(rest) = chunk.strip_prefix("interface ") {
            let (name, body) = rest.split_once('{').expect("interface body");
            let body = &body[..body.rfind('}').expect("interface end")];
            let members = split_top(body, ';')
                .into_iter()
                .filter(|m| !m.contains('('))
                .map(|m| {
                    let (key, ty) = m.split_once(':').expect("member type");
                    let key = key.trim();
                    let optional = key.ends_with('?');
                    (
                        key.trim_end_matches('?').to_string(),
                        optional,
                        ty.trim().to_string(),
                    )
                })
                .collect();
            decls.interfaces.insert(name.trim().to_string(), members);
        }
    }
    decls
}

impl Decls {
    /// Ok when `v` has the TypeScript type `ty`; else what does not match, at `path`.
    fn check(&self, ty: &str, v: &Value, path: &str) -> Result<(), String> {
        let alts = split_top(ty, '|');
        if alts.len() > 1 {
            let errors: Vec<String> = alts
                .iter()
                .filter_map(|a| self.check(a, v, path).err())
                .collect();
            return if errors.len() < alts.len() {
                Ok(())
            } else {
                Err(errors.join("; "))
            };
        }
        let ty = ty.trim();
        let kind_ok = match ty {
            "unknown" => true,
            "number" => v.is_number(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "true" | "false" => v.as_bool() == Some(ty == "true"),
            _ if ty.starts_with('"') => v.as_str() == Some(ty.trim_matches('"')),
            _ if ty.starts_with("Record<") => v.is_object(),
            _ if ty.ends_with("[]") => {
                let Some(items) = v.as_array() else {
                    return Err(format!("{path}: {v} is not an array ({ty})"));
                };
                let inner = &ty[..ty.len() - 2];
                for (i, item) in items.iter().enumerate() {
                    self.check(inner, item, &format!("{path}[{i}]"))?;
                }
                true
            }
            _ if ty.starts_with('[') => {
                let types = split_top(&ty[1..ty.len() - 1], ',');
                let Some(items) = v.as_array().filter(|a| a.len() == types.len()) else {
                    return Err(format!("{path}: {v} is not a tuple {ty}"));
                };
                for (i, (t, item)) in types.iter().zip(items).enumerate() {
                    self.check(t, item, &format!("{path}[{i}]"))?;
                }
                true
            }
            _ if self.aliases.contains_key(ty) => return self.check(&self.aliases[ty], v, path),
            _ if self.interfaces.contains_key(ty) => return self.object(ty, v, path),
            _ => return Err(format!("{path}: unknown type {ty}")),
        };
        if kind_ok {
            Ok(())
        } else {
            Err(format!("{path}: {v} is not {ty}"))
        }
    }

    /// Ok when `v` is an object with exactly the members of interface `name`.
    fn object(&self, name: &str, v: &Value, path: &str) -> Result<(), String> {
        let members = &self.interfaces[name];
        let Some(obj) = v.as_object() else {
            return Err(format!("{path}: {v} is not an object ({name})"));
        };
        for key in obj.keys() {
            if !members.iter().any(|(k, _, _)| k == key) {
                return Err(format!("{path}.{key} is not declared in {name}"));
            }
        }
        for (key, optional, ty) in members {
            match obj.get(key) {
                None if *optional => {}
                None => return Err(format!("{path}.{key} ({name}) is missing")),
                Some(value) => self.check(ty, value, &format!("{path}.{key}"))?,
            }
        }
        Ok(())
    }

    /// The string literals of a union alias, in order.
    fn literals(&self, alias: &str) -> Vec<String> {
        split_top(&self.aliases[alias], '|')
            .iter()
            .map(|l| l.trim_matches('"').to_string())
            .collect()
    }
}

fn assert_type(decls: &Decls, name: &str, v: &Value) {
    if let Err(e) = decls.check(name, v, name) {
        panic!("{e}");
    }
}

#[test]
fn the_unions_list_the_cores_names_in_order() {
    let d = parse(TYPES);
    assert_eq!(d.literals("Format"), Format::NAMES);
    assert_eq!(d.literals("EngineErrorCode"), ERROR_CODES);
    assert_eq!(d.literals("EnvKey"), ENV_KEYS);
}

#[test]
fn the_declared_results_match_what_a_real_engine_returns() {
    let d = parse(TYPES);
    // The session with the largest single message: it has an output to compress.
    let largest = |h: &Vec<Value>| h.iter().map(|m| m.to_string().len()).max().unwrap_or(0);
    let (_, history) = load_sessions()
        .into_iter()
        .max_by_key(|(_, h)| largest(h))
        .expect("a real session");
    let mut engine = sql_engine(&temp_db("ts-types"), 16_000);
    let fresh = serde_json::to_value(engine.status()).unwrap();
    assert!(fresh["last_trim"].is_null(), "before any trim");
    assert_type(&d, "Status", &fresh);
    assert_type(
        &d,
        "EngineConfig",
        &serde_json::to_value(engine.config()).unwrap(),
    );

    let opts = TransformOptions {
        format: Format::OpenAi,
        model: "m".into(),
        overhead_tokens: 0,
        context_window: 0,
        reserve_tokens: 0,
        cache_ttl_ms: 0,
        now_ms: 0,
    };
    let (mut trimmed, mut compressed) = (0, 0);
    for req in requests(&history) {
        let body = Value::Array(req).to_string();
        let stats = engine.transform(&body, &opts).expect("transform").stats;
        trimmed += usize::from(stats.trimmed);
        compressed += stats.compressed;
        assert_type(&d, "Stats", &serde_json::to_value(&stats).unwrap());
    }
    assert!(
        trimmed > 0 && compressed > 0,
        "the session trims and compresses"
    );
    let plan = engine.request_restore().expect("restore");
    assert!(plan.cut.is_some());
    assert_type(&d, "RestorePlan", &serde_json::to_value(&plan).unwrap());
    let last = Value::Array(requests(&history).pop().expect("a request")).to_string();
    let stats = engine.transform(&last, &opts).expect("transform").stats;
    assert!(stats.restored.is_some() && stats.notice.is_some());
    assert_type(&d, "Stats", &serde_json::to_value(&stats).unwrap());
    let status = serde_json::to_value(engine.status()).unwrap();
    assert!(status["last_trim"].is_object() && status["stored"].is_object());
    assert!(status["hold_below"].is_number());
    assert_type(&d, "Status", &status);

    let found = engine
        .search("import", 8, Scope::All, None)
        .expect("search");
    assert!(found.hits.iter().any(|h| h.tool_name.is_some()) && found.hits.len() > 1);
    let text = render_hits("import", &found.hits, Scope::All, &found.how());
    // The object `Engine.search` builds in src/wasm/mod.rs.
    let search = json!({ "hits": found.hits, "mode": found.mode, "coverage": found.coverage, "reason": found.reason, "text": text });
    assert_type(&d, "SearchResult", &search);

    let blob = found.hits.iter().find_map(|h| h.blob_id.clone());
    for id in blob.into_iter().chain(["3".to_string()]) {
        let page = engine.get(&id, None, Some(2), None).expect("get");
        let text = page.render();
        assert_type(&d, "GetResult", &json!({ "page": page, "text": text }));
    }
    let pending = serde_json::to_value(engine.pending_vectors(3).expect("pending")).unwrap();
    assert!(!pending.as_array().unwrap().is_empty());
    assert_type(&d, "PendingVector[]", &pending);

    let c = compact_context(&history, 0.4, &Signals::default()).expect("compact_context");
    assert_type(
        &d,
        "CompactContextResult",
        &json!({ "kept": c.kept, "stats": c.stats }),
    );
}

#[test]
fn a_value_of_the_declared_sql_rows_type_is_what_render_sql_rows_reads() {
    let d = parse(TYPES);
    let runner = json!({ "columns": ["n", "text"], "rows": [[1, "a", null], [2.5, "<blob 3 bytes>", "x"]], "truncated": true });
    assert_type(&d, "SqlRows", &runner);
    let rows: SqlRows = serde_json::from_value(runner).expect("SqlRows");
    assert!(rows.truncated && rows.rows.len() == 2);
}

#[test]
fn the_checker_rejects_an_undeclared_key_a_missing_key_and_a_wrong_type() {
    let d = parse(TYPES);
    let good = json!({ "embedded": 1, "chunks": 2 });
    assert!(d.check("Coverage", &good, "c").is_ok());
    let extra = json!({ "embedded": 1, "chunks": 2, "more": 3 });
    let missing = json!({ "embedded": 1 });
    let wrong = json!({ "embedded": "1", "chunks": 2 });
    for bad in [extra, missing, wrong] {
        assert!(d.check("Coverage", &bad, "c").is_err(), "{bad}");
    }
    assert!(d.check("Hit", &json!({}), "h").is_err());
    assert!(d.check("false", &json!(true), "f").is_err());
    assert!(d
        .check("[string, number]", &json!(["a", 1, 2]), "t")
        .is_err());
    assert!(d
        .check("\"fts\" | \"hybrid\"", &json!("bm25"), "m")
        .is_err());
}
