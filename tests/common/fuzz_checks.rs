//! The properties the fuzz targets check, shared with `tests/fuzz_regressions.rs` so that every
//! input that ever failed is checked again by `make test`.
#![allow(dead_code)]

use serde_json::{json, Value};
use smarter_compact::compress::{
    compress, lines, looks_like_failure, BODY_BUDGET_BYTES, FAILURE_LINES, LINE_CAP_BYTES,
};
use smarter_compact::config::Config;
use smarter_compact::digest::{build, Entry, Parts, DIGEST_HEADER};
use smarter_compact::format::{replace_lone_surrogates, Format};
use smarter_compact::message::{Block, Message, Role};
use smarter_compact::store::MemStore;
use smarter_compact::tokens::estimate_text;
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

/// Messages described by bytes, for the digest: chunks separated by `0xff`, each a selector byte
/// (low 3 bits: user turn, assistant text, shell call, read call, todo call, patch call, result
/// of the last call, call with arguments that are not JSON; bit 7: the cut keeps it) and text.
fn digest_history(data: &[u8]) -> Vec<(bool, bool, Message)> {
    let mut out = Vec::new();
    let mut last_call = String::from("none");
    for (k, chunk) in data.split(|&b| b == 0xff).take(300).enumerate() {
        let Some((&sel, rest)) = chunk.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest).into_owned();
        let id = format!("c{k}");
        let call = |name: &str, arguments: String| Block::ToolCall {
            id: id.clone(),
            name: name.into(),
            arguments,
        };
        let (role, block) = match sel & 7 {
            0 => (Role::User, Block::Text(text)),
            1 => (Role::Assistant, Block::Text(text)),
            2 => (
                Role::Assistant,
                call("bash", json!({ "command": text }).to_string()),
            ),
            3 => (
                Role::Assistant,
                call("read", json!({ "filePath": text }).to_string()),
            ),
            4 => {
                let todos: Vec<Value> = text
                    .lines()
                    .enumerate()
                    .map(|(i, l)| {
                        let status = ["completed", "in_progress", "pending"][i % 3];
                        json!({"content": l, "status": status})
                    })
                    .collect();
                (
                    Role::Assistant,
                    call("todowrite", json!({ "todos": todos }).to_string()),
                )
            }
            5 => (
                Role::Assistant,
                call("apply_patch", json!({ "input": text }).to_string()),
            ),
            6 => (
                Role::Tool,
                Block::ToolResult {
                    call_id: last_call.clone(),
                    name: None,
                    text,
                    is_error: sel & 0x40 != 0,
                },
            ),
            _ => (Role::Assistant, call("bash", text)),
        };
        if matches!(block, Block::ToolCall { .. }) {
            last_call = id.clone();
        }
        let real_user = role == Role::User && !text_is_blank(&block);
        out.push((
            sel & 0x80 != 0,
            real_user,
            Message {
                role,
                blocks: vec![block],
                synthetic: false,
            },
        ));
    }
    out
}

fn text_is_blank(b: &Block) -> bool {
    matches!(b, Block::Text(t) if t.trim().is_empty())
}

/// Any messages, budget and parts: the digest never panics, is the same on every run, stays
/// within its budget (as the engine estimates it), starts with its header, and is empty when
/// every message is kept. Returns the digest.
pub fn digest(data: &[u8]) -> String {
    let Some((&b, rest)) = data.split_first() else {
        return String::new();
    };
    let Some((&p, rest)) = rest.split_first() else {
        return String::new();
    };
    let budget = u32::from(b) * 8;
    let parts = Parts {
        users: p & 1 != 0,
        toc: p & 2 != 0,
        files: p & 4 != 0,
        todo: p & 8 != 0,
        names: p & 16 != 0,
    };
    let history = digest_history(rest);
    let entries: Vec<Entry> = history
        .iter()
        .enumerate()
        .map(|(i, (kept, real_user, message))| Entry {
            number: 1 + i as u64 * 2,
            kept: *kept,
            real_user: *real_user,
            message,
            compressed: &[],
            gists: None,
        })
        .collect();
    let d = build(&entries, budget, parts);
    assert_eq!(d, build(&entries, budget, parts), "deterministic");
    if d.is_empty() {
        return d;
    }
    assert!(d.starts_with(DIGEST_HEADER), "{d}");
    assert!(
        estimate_text(&d) <= budget,
        "{} tokens over a budget of {budget}",
        estimate_text(&d)
    );
    assert!(entries.iter().any(|e| !e.kept), "a digest of nothing");
    d
}

/// Longest header of a compressed output, in bytes (its numbers and blob id included).
const HEADER_MAX_BYTES: usize = 400;
/// What the body may exceed its byte budget by: the marker lines, the line numbers of the failure
/// lines, and the last line the head and the tail each take past their share.
const BODY_SLACK_BYTES: usize = 3 * 120 + FAILURE_LINES * 16 + 2 * (LINE_CAP_BYTES + 64);

/// Any text and threshold, for the error-aware compressor: never panics; within its byte budget;
/// the header comes first and names the blob and the line count; every failure line kept from the
/// omitted middle is a real line of the input that looks like a failure, shown under its own
/// number (whole, or cut with a marker), in order, and as many as the middle's marker says.
/// Returns the numbers of the failure lines kept.
pub fn failures(data: &[u8]) -> Vec<usize> {
    let mut shown = Vec::new();
    let Some((&t, rest)) = data.split_first() else {
        return shown;
    };
    let text = String::from_utf8_lossy(rest);
    let Some(c) = compress(&text, u32::from(t)) else {
        return shown;
    };
    let all = lines(&text);
    let out: Vec<&str> = c.text.split('\n').collect();
    let header = out[0];
    assert!(
        header.starts_with("[smarter-compact] output compressed: ")
            && header.contains(&format!("{} lines", all.len()))
            && header.contains(&c.blob_id),
        "{header}"
    );
    assert!(header.len() <= HEADER_MAX_BYTES, "{header}");
    assert!(
        c.text.len() - header.len() <= BODY_BUDGET_BYTES + BODY_SLACK_BYTES,
        "body of {} bytes",
        c.text.len() - header.len()
    );
    // The middle's marker comes right after the head: its first omitted line is the head's
    // length + 1, which is the marker's index in `out`.
    let marker = (1..out.len()).find(|&i| {
        out[i].starts_with("… ")
            && (out[i].starts_with(&format!("… lines {i}–"))
                || out[i].contains(&format!(" lines omitted ({i}–")))
    });
    let Some(m) = marker else {
        return shown;
    };
    // Failure lines follow only a marker that announces them.
    let Some(announced) = out[m]
        .split_once("except the ")
        .or_else(|| out[m].split_once("the first "))
        .and_then(|(_, r)| r.split(' ').next()?.parse::<usize>().ok())
    else {
        return shown;
    };
    let mut prev = 0;
    for line in &out[m + 1..] {
        let Some(rest) = line.strip_prefix("[line ") else {
            break;
        };
        let (n, kept) = rest.split_once("] ").expect("a numbered failure line");
        let n: usize = n.parse().expect("a line number");
        assert!(
            n > prev && n >= m && n <= all.len(),
            "line {n} after {prev}"
        );
        let real = all[n - 1];
        assert!(looks_like_failure(real), "line {n} {real:?}");
        let whole = kept == real;
        let cut = kept.ends_with(" more bytes]")
            && kept
                .rsplit_once("… [line cut: ")
                .is_some_and(|(head, _)| real.starts_with(head) && head.len() < real.len());
        assert!(whole || cut, "line {n}: {kept:?} is not {real:?}");
        prev = n;
        shown.push(n);
    }
    assert_eq!(announced, shown.len(), "{}", out[m]);
    shown
}
