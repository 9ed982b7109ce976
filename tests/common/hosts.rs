//! Host message lists for tests: canonical histories turned into OpenCode, Pi and OpenAI
//! Responses items the way those hosts send them, and the replay and checks at the host level.

use serde_json::{json, Value};
use smarter_compact::format::Format;
use smarter_compact::store::Store;
use smarter_compact::Engine;

use super::invariants::{check, Tally};
use super::Step;

/// An Anthropic history as OpenCode messages: the system message is not part of the list; each
/// assistant message takes the tool results that follow it into its tool parts.
pub fn to_opencode(h: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (i, m) in h.iter().enumerate() {
        let info = |role: &str| json!({"id": format!("msg_{i}"), "sessionID": "ses_test", "role": role, "time": {"created": i}});
        match m["role"].as_str() {
            Some("user")
                if m["content"]
                    .as_array()
                    .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result")) =>
            {
                let last = out.last_mut().expect("results follow an assistant message");
                for r in m["content"].as_array().into_iter().flatten() {
                    let parts = last["parts"].as_array_mut().expect("parts");
                    if let Some(p) = parts.iter_mut().find(|p| p["callID"] == r["tool_use_id"]) {
                        p["state"]["status"] = json!("completed");
                        p["state"]["output"] = r["content"].clone();
                    }
                }
            }
            Some("user") => {
                let text = match &m["content"] {
                    Value::String(s) => s.clone(),
                    c => c[0]["text"].as_str().unwrap_or_default().to_string(),
                };
                out.push(json!({"info": info("user"), "parts": [{"id": format!("prt_{i}"), "type": "text", "text": text}]}));
            }
            Some("assistant") => {
                let mut parts = vec![json!({"id": format!("prt_s{i}"), "type": "step-start"})];
                for (k, b) in m["content"].as_array().into_iter().flatten().enumerate() {
                    let id = format!("prt_{i}_{k}");
                    parts.push(match b["type"].as_str() {
                        Some("thinking") => json!({"id": id, "type": "reasoning", "text": b["thinking"], "metadata": {"anthropic": {"signature": b["signature"]}}}),
                        Some("tool_use") => json!({"id": id, "type": "tool", "callID": b["id"], "tool": b["name"], "state": {"status": "running", "input": b["input"]}}),
                        _ => json!({"id": id, "type": "text", "text": b["text"]}),
                    });
                }
                out.push(json!({"info": info("assistant"), "parts": parts}));
            }
            _ => {}
        }
    }
    out
}

/// An Anthropic history as Responses items: reasoning with `encrypted_content`, assistant
/// messages, function calls and their outputs, the system message as a developer message.
pub fn to_responses(h: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let texts = |c: &Value| -> Vec<String> {
        match c {
            Value::String(s) => vec![s.clone()],
            Value::Array(b) => b
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    for m in h {
        match m["role"].as_str() {
            Some("system") => out.push(json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": texts(&m["content"]).join("\n")}]})),
            Some("user") => {
                let blocks = m["content"].as_array().cloned().unwrap_or_default();
                if blocks.iter().any(|b| b["type"] == "tool_result") {
                    for r in blocks {
                        out.push(json!({"type": "function_call_output", "call_id": r["tool_use_id"], "output": r["content"]}));
                    }
                } else {
                    let t = texts(&m["content"]).join("\n");
                    out.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}));
                }
            }
            Some("assistant") => {
                for b in m["content"].as_array().cloned().unwrap_or_default() {
                    out.push(match b["type"].as_str() {
                        Some("thinking") => json!({"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": b["thinking"]}], "encrypted_content": b["signature"]}),
                        Some("tool_use") => json!({"type": "function_call", "call_id": b["id"], "name": b["name"], "arguments": b["input"].to_string()}),
                        _ => json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": b["text"]}]}),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// An OpenAI history as Pi messages (Pi keeps the system prompt outside the list).
pub fn to_pi(h: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, m) in h.iter().enumerate() {
        match m["role"].as_str() {
            Some("user") => out.push(json!({"role": "user", "content": [{"type": "text", "text": m["content"]}], "timestamp": i})),
            Some("assistant") => {
                let mut content = Vec::new();
                for t in m["thinking_blocks"].as_array().into_iter().flatten() {
                    content.push(json!({"type": "thinking", "thinking": t["thinking"], "thinkingSignature": t["signature"]}));
                }
                if let Some(t) = m["content"].as_str() {
                    content.push(json!({"type": "text", "text": t}));
                }
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap_or("{}")).unwrap_or(json!({}));
                    content.push(json!({"type": "toolCall", "id": c["id"], "name": c["function"]["name"], "arguments": args}));
                }
                out.push(json!({"role": "assistant", "content": content, "api": "test", "usage": {"input": i}, "timestamp": i}));
            }
            Some("tool") => out.push(json!({"role": "toolResult", "toolCallId": m["tool_call_id"], "toolName": "bash", "content": [{"type": "text", "text": m["content"]}], "isError": false, "timestamp": i})),
            _ => {}
        }
    }
    out
}

/// The canonical messages of host items, as the engine reads them.
pub fn canonical(format: Format, items: &[Value]) -> Vec<Value> {
    match format.host() {
        None => items.to_vec(),
        Some(h) => h
            .read(items)
            .expect("host items read")
            .into_iter()
            .map(|c| c.message)
            .collect(),
    }
}

/// The requests a host sends: its items before each model turn, then all of them.
pub fn requests(format: Format, items: &[Value]) -> Vec<Vec<Value>> {
    let host = format.host().expect("a host format");
    let mut starts: Vec<usize> = host
        .read(items)
        .expect("read")
        .iter()
        .filter(|c| c.message["role"] == "assistant")
        .map(|c| c.items.start)
        .filter(|&s| s > 0)
        .collect();
    starts.dedup();
    let mut reqs: Vec<Vec<Value>> = starts.iter().map(|&s| items[..s].to_vec()).collect();
    reqs.push(items.to_vec());
    reqs
}

/// Replays host requests and checks the trim invariants on their canonical reading, plus at the
/// host level: between trims each request's items extend the previous request's byte for byte,
/// and every item that comes out is an input item or an edit of one (by `from`).
pub fn check_host_replay<S: Store>(
    engine: &mut Engine<S>,
    format: Format,
    reqs: &[Vec<Value>],
    trim_at: u32,
    t: &mut Tally,
) -> Vec<Vec<String>> {
    let mut steps = Vec::new();
    let mut outputs: Vec<Vec<String>> = Vec::new();
    for (k, req) in reqs.iter().enumerate() {
        let texts: Vec<String> = req.iter().map(Value::to_string).collect();
        let out = engine
            .transform(&format!("[{}]", texts.join(",")), &super::opts(format))
            .expect("transform");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let items: Vec<Value> = serde_json::from_str(&out.rewrite.render(&refs)).expect("render");
        let item_texts: Vec<String> = items.iter().map(Value::to_string).collect();
        if let (Some(prev), false) = (outputs.last(), out.stats.trimmed) {
            if !(prev.len() <= item_texts.len()
                && prev.iter().zip(&item_texts).all(|(a, b)| a == b))
            {
                t.violations.push(format!(
                    "{format:?} req {k}: host items changed without a trim"
                ));
            }
        }
        let mut from = Vec::new();
        for p in &out.rewrite.pieces {
            match p {
                smarter_compact::rewrite::Piece::Keep(a, b) => from.extend(*a..*b),
                smarter_compact::rewrite::Piece::Replace { from: f, .. } => from.extend(f),
            }
        }
        if from.len() != items.len()
            || from.windows(2).any(|w| w[0] >= w[1])
            || from.iter().any(|&i| i >= req.len())
        {
            t.violations.push(format!(
                "{format:?} req {k}: sources {from:?} do not map the output"
            ));
        }
        let canon_out = canonical(format, &items);
        if out.stats.cut > 0
            && !canon_out.iter().any(|m| {
                m.to_string()
                    .contains(smarter_compact::trim::POINTER_PREFIX)
            })
        {
            t.violations.push(format!(
                "{format:?} req {k}: a cut is in force but no pointer is sent"
            ));
        }
        steps.push(Step {
            input: canonical(format, req),
            output: canon_out.iter().map(Value::to_string).collect(),
            stats: out.stats,
        });
        outputs.push(item_texts);
    }
    check(&format!("{format:?}"), &steps, format, trim_at, 3, t);
    outputs
}
