//! The table of contents of the trimmed tool calls: one line per call with its message numbers,
//! the tool, a short form of its arguments and what came back.

use std::collections::{BTreeMap, HashMap};

use super::{collapse, Entry, Gist};
use crate::facts::Part;
use crate::message::Block;
use crate::tokens::estimate_text;

/// Most bytes of a call's arguments in its line.
pub const ARGS_CAP_BYTES: usize = 160;

/// One trimmed tool call and its result.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// Message number of the call.
    pub call_at: u64,
    /// Message number of the result, when there is one.
    pub result_at: Option<u64>,
    /// Tool name.
    pub tool: String,
    /// Short form of the arguments.
    pub args: String,
    /// What came back: exit status, size, first failure line, blob id.
    pub result: String,
    /// How the call ended: `Some(true)` failed (an error result or a non-zero exit status),
    /// `Some(false)` passed (exit status 0, or no status, no error and no failure line), `None`
    /// when there is no result or it cannot tell (no status, but a failure line).
    pub failed: Option<bool>,
    /// The result's first failure line, when it has one.
    pub failure_line: Option<String>,
}

/// A trimmed result by its call: its message number, gist, error flag and blob id.
type FoundResult<'a> = (u64, std::borrow::Cow<'a, Gist>, bool, Option<&'a str>);

/// The trimmed tool calls of `history`, in order.
pub fn exchanges(history: &[Entry]) -> Vec<Exchange> {
    let mut results: HashMap<&str, FoundResult> = HashMap::new();
    for e in history.iter().filter(|e| !e.kept) {
        for r in e.results() {
            let blob = e.compressed.iter().find_map(|c| match &c.part {
                Part::ToolResult(id) if id == r.call_id => Some(c.blob_id.as_str()),
                _ => None,
            });
            results.insert(r.call_id, (e.number, r.gist, r.is_error, blob));
        }
    }
    let mut out = Vec::new();
    for e in history.iter().filter(|e| !e.kept) {
        for b in &e.message.blocks {
            let Block::ToolCall {
                id,
                name,
                arguments,
            } = b
            else {
                continue;
            };
            let found = results.get(id.as_str());
            let (failed, failure_line) =
                found.map_or((None, None), |(_, gist, err, _)| ending(gist, *err));
            out.push(Exchange {
                call_at: e.number,
                result_at: found.map(|r| r.0),
                tool: name.clone(),
                args: short_args(&crate::message::call_arguments(arguments)),
                result: found.map_or_else(String::new, |(_, gist, err, blob)| {
                    result_summary(gist, *err, *blob)
                }),
                failed,
                failure_line,
            });
        }
    }
    out
}

/// The short form of a call's arguments: the command, else the file path (with a pattern or
/// range when given), else the first string values; on one line, capped.
pub fn short_args(arguments: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return collapse(arguments, ARGS_CAP_BYTES);
    };
    let Some(obj) = v.as_object() else {
        return collapse(&v.to_string(), ARGS_CAP_BYTES);
    };
    let text = |k: &str| -> Option<String> {
        match obj.get(k)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) => Some(
                a.iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            serde_json::Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(cmd) = ["command", "cmd", "script"].iter().find_map(|k| text(k)) {
        parts.push(cmd);
    }
    for k in ["filePath", "file_path", "path", "notebook_path", "file"] {
        if let Some(p) = text(k) {
            parts.push(p);
            break;
        }
    }
    for k in [
        "pattern",
        "query",
        "url",
        "offset",
        "limit",
        "view_range",
        "old_str",
        "oldString",
    ] {
        if let Some(p) = text(k) {
            parts.push(format!("{k}={p}"));
        }
    }
    if parts.is_empty() {
        parts.extend(obj.values().filter_map(|v| v.as_str().map(str::to_string)));
    }
    if parts.is_empty() {
        return collapse(&v.to_string(), ARGS_CAP_BYTES);
    }
    collapse(&parts.join(" "), ARGS_CAP_BYTES)
}

/// `exit 1 · 230 lines · "first failure line" · blob <id>`.
fn result_summary(gist: &Gist, is_error: bool, blob: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let status = gist.exit;
    match status {
        Some(code) => parts.push(format!("exit {code}")),
        None if is_error => parts.push("error".into()),
        None => {}
    }
    let n = gist.lines;
    parts.push(if n == 1 {
        "1 line".into()
    } else {
        format!("{n} lines")
    });
    let failed = is_error || status.is_some_and(|c| c != 0);
    if failed || status.is_none() {
        if let Some(line) = &gist.failure_line {
            parts.push(format!("\"{line}\""));
        }
    }
    if let Some(id) = blob {
        parts.push(format!("blob {id}"));
    }
    parts.join(" · ")
}

/// Whether a result failed (see [`Exchange::failed`]) and its first failure line.
fn ending(gist: &Gist, is_error: bool) -> (Option<bool>, Option<String>) {
    let line = gist.failure_line.clone();
    let failed = match gist.exit {
        Some(code) => Some(is_error || code != 0),
        None if is_error => Some(true),
        None => line.is_none().then_some(false),
    };
    (failed, line)
}

/// The exit status a tool output states: `<returncode>N</returncode>`, `Exit code: N`,
/// `exit status N`, `Process exited with code N`.
pub(super) fn exit_status(text: &str) -> Option<i64> {
    let head = &text[..super::floor_boundary(text, 400)];
    let tail = &text[super::ceil_boundary(text, text.len().saturating_sub(400))..];
    for part in [head, tail] {
        let lower = part.to_ascii_lowercase();
        for marker in [
            "<returncode>",
            "exit code:",
            "exit code",
            "exit status",
            "exited with code",
        ] {
            if let Some(at) = lower.find(marker) {
                let rest = lower[at + marker.len()..].trim_start();
                let digits: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                if let Ok(code) = digits.parse() {
                    return Some(code);
                }
            }
        }
    }
    None
}

/// The ToC within `budget` tokens: the newest calls in full, the older ones condensed into one
/// range line when they do not fit.
pub fn section(list: &[Exchange], budget: u32) -> String {
    if list.is_empty() {
        return String::new();
    }
    let title = "Trimmed tool calls (#call → #result):";
    let full: Vec<String> = list.iter().map(line).collect();
    let costs: Vec<u32> = full.iter().map(|l| estimate_text(l) + 1).collect();
    let title_cost = estimate_text(title) + 1;
    // suffix[k] = cost of lines k.. in full.
    let mut suffix = vec![0u32; list.len() + 1];
    for k in (0..list.len()).rev() {
        suffix[k] = suffix[k + 1] + costs[k];
    }
    for k in 0..=list.len() {
        let condensed = (k > 0).then(|| range_line(&list[..k]));
        let cost = title_cost + suffix[k] + condensed.as_ref().map_or(0, |c| estimate_text(c) + 1);
        if cost <= budget {
            let mut out = vec![title.to_string()];
            out.extend(condensed);
            out.extend(full[k..].iter().cloned());
            return out.join("\n");
        }
    }
    String::new()
}

/// `#12 bash: <args> → #13 exit 0 · 80 lines`.
fn line(x: &Exchange) -> String {
    let at = match x.result_at {
        Some(r) if r != x.call_at => format!("#{}→#{r}", x.call_at),
        _ => format!("#{}", x.call_at),
    };
    if x.result.is_empty() {
        format!("{at} {}: {}", x.tool, x.args)
    } else {
        format!("{at} {}: {} → {}", x.tool, x.args, x.result)
    }
}

/// `#3…#41: 19 calls (bash ×15, read ×4)`.
fn range_line(list: &[Exchange]) -> String {
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for x in list {
        *tools.entry(x.tool.as_str()).or_default() += 1;
    }
    let mut by_count: Vec<(&str, usize)> = tools.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let tools: Vec<String> = by_count
        .iter()
        .take(6)
        .map(|(t, n)| format!("{t} ×{n}"))
        .collect();
    let first = list[0].call_at;
    let last = list[list.len() - 1]
        .result_at
        .unwrap_or(list[list.len() - 1].call_at);
    let noun = if list.len() == 1 { "call" } else { "calls" };
    format!(
        "#{first}…#{last}: {} older {noun} ({}); smart_compact_search finds them",
        list.len(),
        tools.join(", ")
    )
}
