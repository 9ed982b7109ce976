//! Shared test tooling: the real-session converter, a replay driver and the trim invariants.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::format::Format;
use smarter_compact::store::MemStore;
use smarter_compact::{Engine, TransformOptions};

/// The real sessions shipped beside the project.
pub fn sessions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sessions/swe-traj")
}

/// All real sessions as (id, OpenAI-format history).
pub fn load_sessions() -> Vec<(String, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(sessions_dir())
        .expect("sessions dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let d: Value =
                serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json");
            let id = d["instance_id"].as_str().unwrap_or("session").to_string();
            (id, to_openai(d["messages"].as_array().expect("messages")))
        })
        .collect()
}

/// mini-swe-agent messages → OpenAI chat history: the first ```bash block of an assistant
/// message becomes a `bash` tool call, and the next user message is its result.
pub fn to_openai(raw: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for (i, m) in raw.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        let content = m["content"].as_str().unwrap_or_default();
        if role == "assistant" {
            if let Some((before, cmd, after)) = bash_block(content) {
                let id = format!("call_{i}");
                let rest = format!("{before}{after}").trim().to_string();
                let args = json!({ "command": cmd }).to_string();
                out.push(json!({"role": "assistant", "content": if rest.is_empty() { Value::Null } else { Value::String(rest) },
                    "tool_calls": [{"id": id, "type": "function", "function": {"name": "bash", "arguments": args}}]}));
                pending = Some(id);
            } else {
                pending = None;
                out.push(json!({"role": "assistant", "content": content}));
            }
        } else if let (true, Some(id)) = (role == "user", pending.take()) {
            out.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
        } else {
            out.push(json!({"role": role, "content": content}));
        }
    }
    if pending.is_some() {
        out.pop();
    }
    out
}

/// Splits out the first ```bash fenced block: (text before, command, text after).
fn bash_block(content: &str) -> Option<(&str, String, &str)> {
    let start = content.find("```bash")?;
    let after_tag = &content[start + 7..];
    let ws = after_tag.len() - after_tag.trim_start().len();
    let nl = after_tag[..ws].rfind('\n')?;
    let body = &after_tag[nl + 1..];
    let end = body.find("```")?;
    let cmd = body[..end].trim().to_string();
    let consumed = start + 7 + nl + 1 + end + 3;
    Some((&content[..start], cmd, &content[consumed..]))
}

/// The requests a host sends: the history before each assistant message, then the whole.
pub fn requests(history: &[Value]) -> Vec<Vec<Value>> {
    let mut reqs: Vec<Vec<Value>> = (1..history.len())
        .filter(|&i| history[i]["role"] == "assistant")
        .map(|i| history[..i].to_vec())
        .collect();
    reqs.push(history.to_vec());
    reqs
}

/// An engine over an in-memory store with a fixed threshold.
pub fn engine(trim_at: u32) -> Engine<MemStore> {
    let config = Config::resolve(
        &Default::default(),
        None,
        &json!({ "trimAtTokens": trim_at }),
    );
    Engine::open(MemStore::default(), config).expect("open")
}

/// Options for a request in `format`.
pub fn opts(format: Format) -> TransformOptions {
    TransformOptions {
        format,
        model: "test-model".into(),
        overhead_tokens: 0,
        context_window: 0,
        reserve_tokens: 0,
        cache_ttl_ms: 0,
        now_ms: 0,
    }
}

/// One replayed request: what went in, what came out (as JSON texts per message) and the stats.
pub struct Step {
    pub input: Vec<Value>,
    pub output: Vec<String>,
    pub stats: smarter_compact::engine::Stats,
}

/// Feeds `history` request by request to a fresh engine.
pub fn replay<S: smarter_compact::store::Store>(
    engine: &mut Engine<S>,
    reqs: &[Vec<Value>],
    format: Format,
) -> Vec<Step> {
    reqs.iter()
        .map(|req| {
            let texts: Vec<String> = req.iter().map(Value::to_string).collect();
            let body = format!("[{}]", texts.join(","));
            let out = engine.transform(&body, &opts(format)).expect("transform");
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let rendered: Vec<Value> =
                serde_json::from_str(&out.rewrite.render(&refs)).expect("render");
            Step {
                input: req.clone(),
                output: rendered.iter().map(Value::to_string).collect(),
                stats: out.stats,
            }
        })
        .collect()
}

pub mod fuzz_checks;
pub mod fuzz_guard;
pub mod hosts;
pub mod invariants;
pub mod native_sql;
pub mod store_env;
