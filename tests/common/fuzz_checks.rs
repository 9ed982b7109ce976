//! The properties the fuzz targets check, shared with `tests/fuzz_regressions.rs` so that every
//! input that ever failed is checked again by `make test`.
#![allow(dead_code)]

use serde_json::{json, Value};
use smarter_compact::compress::{compress, lines};
use smarter_compact::config::Config;
use smarter_compact::format::{replace_lone_surrogates, Format};
use smarter_compact::store::MemStore;
use smarter_compact::{Engine, TransformOptions};

fn engine(trim_at: u32) -> Engine<MemStore> {
    let c = Config::resolve(
        &Default::default(),
        None,
        &json!({ "trimAtTokens": trim_at, "compressOverTokens": 200 }),
    );
    Engine::open(MemStore::default(), c).expect("open")
}

fn opts(format: Format) -> TransformOptions {
    TransformOptions {
        format,
        model: String::new(),
        overhead_tokens: 0,
        context_window: 0,
        reserve_tokens: 0,
        cache_ttl_ms: 0,
        now_ms: 0,
    }
}

/// Any bytes as a request, in every wire and host format: an error or a valid rewrite, never a
/// panic; a rewrite is a JSON array whose items the format still reads, with every tool result
/// after its call.
pub fn adapters(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in Format::ALL {
        let mut e = engine(1_000);
        let Ok(out) = e.transform(text, &opts(format)) else {
            continue;
        };
        let raws: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(text).expect("accepted input is a JSON array");
        let refs: Vec<&str> = raws.iter().map(|r| r.get()).collect();
        let rendered = replace_lone_surrogates(&out.rewrite.render(&refs));
        let rendered: Vec<Value> = serde_json::from_str(&rendered).expect("the rewrite is JSON");
        let canonical: Vec<Value> = match format.host() {
            None => rendered,
            Some(h) => h
                .read(&rendered)
                .expect("rewritten items stay readable")
                .into_iter()
                .map(|c| c.message)
                .collect(),
        };
        let mut calls = std::collections::HashSet::new();
        for m in &canonical {
            let view = format
                .adapter()
                .view(m, 0)
                .expect("rewritten messages stay readable");
            for r in view.result_ids() {
                assert!(calls.contains(r), "orphan result {r}");
            }
            calls.extend(view.call_ids().map(str::to_string));
        }
    }
}

/// Any text and threshold: compression never panics, never grows the text, keeps its id stable
/// and reports the right line count.
pub fn compression(data: &[u8]) {
    let Some((&t, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if let Some(c) = compress(&text, u32::from(t)) {
        assert!(c.text.len() < text.len());
        assert_eq!(c.lines, lines(&text).len());
        assert_eq!(
            compress(&text, u32::from(t)).map(|d| d.blob_id),
            Some(c.blob_id)
        );
    }
}

/// A session described by bytes (each byte one step: user turn, tool exchange with 1–3 calls and
/// outputs of varied size, or an answer), replayed request by request: pairs stay whole, and
/// between trims each request extends the previous one.
pub fn planner(data: &[u8]) {
    let Some((&t, steps)) = data.split_first() else {
        return;
    };
    let trim_at = 1_000 + u32::from(t) * 40;
    let mut h = vec![json!({"role": "system", "content": "sys"})];
    let mut id = 0;
    for (k, &b) in steps.iter().take(200).enumerate() {
        match b % 4 {
            0 => h.push(json!({"role": "user", "content": format!("turn {k} {}", "word ".repeat(usize::from(b)))})),
            1 | 2 => {
                let n = 1 + usize::from(b / 4) % 3;
                let calls: Vec<Value> = (0..n).map(|c| json!({"id": format!("c{}", id + c), "type": "function", "function": {"name": "bash", "arguments": "{}"}})).collect();
                h.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                for c in 0..n {
                    let size = usize::from(b) * if b % 2 == 0 { 30 } else { 1 };
                    h.push(json!({"role": "tool", "tool_call_id": format!("c{}", id + c), "content": format!("out {k}\n").repeat(size + 1)}));
                }
                id += n;
            }
            _ => h.push(json!({"role": "assistant", "content": format!("answer {k}")})),
        }
    }
    let mut e = engine(trim_at);
    let mut prev: Option<Vec<String>> = None;
    for end in (1..=h.len()).filter(|&i| i == h.len() || h[i]["role"] == "assistant") {
        let texts: Vec<String> = h[..end].iter().map(Value::to_string).collect();
        let out = e
            .transform(&format!("[{}]", texts.join(",")), &opts(Format::OpenAi))
            .expect("valid sessions transform");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let rendered: Vec<Value> = serde_json::from_str(&out.rewrite.render(&refs)).expect("json");
        let mut open = std::collections::HashSet::new();
        for m in &rendered {
            if let Some(calls) = m["tool_calls"].as_array() {
                open.extend(
                    calls
                        .iter()
                        .map(|c| c["id"].as_str().unwrap_or_default().to_string()),
                );
            }
            if let Some(r) = m["tool_call_id"].as_str() {
                assert!(open.remove(r), "orphan result {r}");
            }
        }
        assert!(open.is_empty(), "orphan calls {open:?}");
        let cur: Vec<String> = rendered.iter().map(Value::to_string).collect();
        if let (Some(p), false) = (&prev, out.stats.trimmed) {
            assert!(
                p.len() <= cur.len() && p.iter().zip(&cur).all(|(a, b)| a == b),
                "prefix changed without a trim"
            );
        }
        prev = Some(cur);
    }
}
