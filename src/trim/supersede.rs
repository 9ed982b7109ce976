//! Supersession: when a cut is made, a tool result that a later one in the request makes
//! redundant is sent as a one-line reference to the later one.
//!
//! A later result supersedes an earlier one when it is
//! - the same call (same tool name, same arguments once their JSON is normalised) with the same
//!   output, or
//! - a later read of the same file: file-read tools (`read`, `Read`, `read_file`, `view`) and
//!   simple shell reads (`cat <path>`, `head`/`tail …<path>`, `sed -n '…p' <path>`, `nl <path>`:
//!   one command, one path, nothing piped or chained). A whole-file read supersedes every
//!   earlier read of the file; a partial read (offset, limit, a line range) only an earlier read
//!   of the same part.
//!
//! The rule of what may be replaced:
//! - only results the cut keeps in the request, superseded by a result the cut also keeps (what
//!   the cut takes out is gone anyway, and a reference must point at something visible);
//! - never a result of the request's last tool exchange: that is what the agent is looking at
//!   right now, even when it read the same file twice in one go;
//! - never a result of a protected tool, an error result as the later one, or a compressed later
//!   result for an earlier one sent whole (the reference must not show less than it replaces);
//! - only when the reference is shorter than what it replaces.
//!
//! The decision is made once, at the cut, and frozen in it: between two cuts every request
//! carries the same bytes; a request after the cut never supersedes anything new.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compress::compress;
use crate::digest::touches;
use crate::message::{Block, Message};
use crate::tokens::estimate_text;

/// Marker that starts every reference to a superseding result.
pub const SUPERSEDED_PREFIX: &str = "[smarter-compact] superseded by";

/// A tool result sent as a reference to a later result that supersedes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Superseded {
    /// Index of the message carrying the result.
    pub at: usize,
    /// The call the result answers.
    pub call_id: String,
    /// The reference sent instead of the result.
    pub text: String,
    /// Estimated tokens the reference saves over what was sent before.
    pub tokens: u64,
}

/// One message of the request as supersession sees it.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Its message number in the session store.
    pub number: u64,
    /// The cut keeps it in the request.
    pub kept: bool,
    /// Its results may not be replaced (the last tool exchange, a protected tool).
    pub frozen: bool,
    /// The message.
    pub message: &'a Message,
    /// Call ids of its results that are sent compressed.
    pub compressed: &'a [String],
}

/// A kept tool result with what supersession compares.
struct Candidate<'a> {
    at: usize,
    call_id: &'a str,
    tool: &'a str,
    /// The call's arguments, normalised.
    args: String,
    output: &'a str,
    is_error: bool,
    compressed: bool,
    frozen: bool,
    /// (path, part) when the call reads a file; part `None` for the whole file.
    read: Option<(String, Option<String>)>,
}

/// The results of `history` that later results supersede, in message order, each with its
/// reference text.
pub fn supersede(history: &[Seen]) -> Vec<Superseded> {
    let mut calls: HashMap<&str, (&str, &str)> = HashMap::new();
    for s in history {
        for b in &s.message.blocks {
            if let Block::ToolCall {
                id,
                name,
                arguments,
            } = b
            {
                calls.insert(id.as_str(), (name.as_str(), arguments.as_str()));
            }
        }
    }
    let mut results: Vec<Candidate> = Vec::new();
    for (at, s) in history.iter().enumerate().filter(|(_, s)| s.kept) {
        for b in &s.message.blocks {
            let Block::ToolResult {
                call_id,
                text,
                is_error,
                ..
            } = b
            else {
                continue;
            };
            let Some(&(tool, arguments)) = calls.get(call_id.as_str()) else {
                continue;
            };
            results.push(Candidate {
                at,
                call_id,
                tool,
                args: normalise(arguments),
                output: text,
                is_error: *is_error,
                compressed: s.compressed.iter().any(|c| c == call_id),
                frozen: s.frozen,
                read: file_read(tool, arguments),
            });
        }
    }
    let mut out = Vec::new();
    for (k, r) in results.iter().enumerate() {
        if r.frozen {
            continue;
        }
        let by = results[k + 1..].iter().rev().find_map(|later| {
            if later.is_error || (later.compressed && !r.compressed) {
                return None;
            }
            let same_call = later.tool == r.tool && later.args == r.args;
            if same_call && later.output == r.output {
                return Some((later, Why::SameCall));
            }
            match (&r.read, &later.read) {
                (Some((p, part)), Some((q, later_part)))
                    if p == q && (later_part.is_none() || later_part == part) =>
                {
                    Some((later, Why::ReadAgain(p)))
                }
                _ => None,
            }
        });
        let Some((later, why)) = by else {
            continue;
        };
        let text = reference(history[later.at].number, history[r.at].number, r, &why);
        let sent = if r.compressed {
            compress(r.output, 0).map_or(r.output.to_string(), |c| c.text)
        } else {
            r.output.to_string()
        };
        let saved = estimate_text(&sent).saturating_sub(estimate_text(&text));
        if saved > 0 {
            out.push(Superseded {
                at: r.at,
                call_id: r.call_id.to_string(),
                text,
                tokens: u64::from(saved),
            });
        }
    }
    out
}

/// Why a later result supersedes an earlier one.
enum Why<'a> {
    /// The same call gave the same output.
    SameCall,
    /// The file was read again.
    ReadAgain(&'a str),
}

/// `[smarter-compact] superseded by #N (same read of src/x.py; full text: smart_compact_get(id="M"))`.
fn reference(later: u64, this: u64, r: &Candidate, why: &Why) -> String {
    let what = match (why, &r.read) {
        (Why::SameCall, Some((path, _))) => format!("same read of {path}"),
        (Why::SameCall, None) => format!("same {} call, same output", r.tool),
        (Why::ReadAgain(path), _) => format!("{path} read again"),
    };
    format!("{SUPERSEDED_PREFIX} #{later} ({what}; full text: smart_compact_get(id=\"{this}\"))")
}

/// Arguments as JSON with object keys sorted at every level (the text itself when not JSON).
fn normalise(arguments: &str) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v) => sorted(&unwrapped(v)).to_string(),
        Err(_) => arguments.trim().to_string(),
    }
}

/// The arguments themselves when the Responses API's canonical reading kept them as the JSON
/// text they were sent as (`{"arguments": "{…}"}`).
fn unwrapped(v: Value) -> Value {
    match v.as_object().map(|o| (o.len(), o.get("arguments"))) {
        Some((1, Some(Value::String(inner)))) => serde_json::from_str(inner).unwrap_or(v),
        _ => v,
    }
}

/// Keys that name the file of a file-read tool.
const PATH_KEYS: [&str; 3] = ["filePath", "file_path", "path"];

/// The file a call reads, and which part (`None`: all of it), when it is a file read.
pub fn file_read(tool: &str, arguments: &str) -> Option<(String, Option<String>)> {
    let v = unwrapped(serde_json::from_str(arguments).ok()?);
    let arguments = &v.to_string();
    let obj = v.as_object()?;
    let lower = tool.to_ascii_lowercase();
    let part = if matches!(lower.as_str(), "read" | "read_file" | "view" | "cat") {
        let mut rest: Vec<String> = obj
            .iter()
            .filter(|(k, v)| !PATH_KEYS.contains(&k.as_str()) && !v.is_null())
            .map(|(k, v)| format!("{k}={}", normalise(&v.to_string())))
            .collect();
        rest.sort();
        (!rest.is_empty()).then(|| rest.join(" "))
    } else {
        shell_read_part(obj)?
    };
    // The path as the digest reads it (one file, read).
    let found = touches(tool, arguments);
    let [(path, crate::digest::TouchKind::Read)] = found.as_slice() else {
        return None;
    };
    Some((path.trim_start_matches("./").to_string(), part))
}

/// Shell commands that print (a part of) one file.
const SHELL_READERS: [&str; 5] = ["cat", "head", "tail", "sed", "nl"];

/// The part of a file a simple shell read shows (`None` inside: the whole file), or `None` when
/// the call is not a simple shell read of one file.
fn shell_read_part(obj: &serde_json::Map<String, Value>) -> Option<Option<String>> {
    let command = match obj.get("command").or_else(|| obj.get("cmd"))? {
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            let words: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                    script.to_string()
                }
                _ => words.join(" "),
            }
        }
        _ => return None,
    };
    let command = command.trim();
    if command.contains(|c: char| "\n;|&<>$`(){}*?\\".contains(c)) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let first = *words.first()?;
    if !SHELL_READERS.contains(&first) || words.len() < 2 {
        return None;
    }
    if first == "sed" && words.get(1) != Some(&"-n") {
        return None;
    }
    // The part: the command without its last word (the path, checked by the caller).
    Some((words.len() > 2 || first != "cat").then(|| words[..words.len() - 1].join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_reads_and_their_parts() {
        let read = |tool: &str, args: &str| file_read(tool, args);
        assert_eq!(
            read("read", r#"{"filePath":"./src/a.py"}"#),
            Some(("src/a.py".into(), None))
        );
        assert_eq!(
            read("Read", r#"{"file_path":"src/a.py","offset":10,"limit":20}"#),
            Some(("src/a.py".into(), Some("limit=20 offset=10".into())))
        );
        assert_eq!(
            read("read", r#"{"arguments":"{\"filePath\":\"src/a.py\"}"}"#),
            Some(("src/a.py".into(), None))
        );
        assert_eq!(
            read("bash", r#"{"command":"cat src/a.py"}"#),
            Some(("src/a.py".into(), None))
        );
        assert_eq!(
            read("bash", r#"{"command":"sed -n '1,40p' src/a.py"}"#),
            Some(("src/a.py".into(), Some("sed -n '1,40p'".into())))
        );
        assert_eq!(
            read(
                "exec_command",
                r#"{"cmd":["bash","-lc","head -n 5 src/a.py"]}"#
            ),
            Some(("src/a.py".into(), Some("head -n 5".into())))
        );
        for (tool, args) in [
            ("bash", r#"{"command":"cat src/a.py | grep x"}"#),
            ("bash", r#"{"command":"cat src/a.py src/b.py"}"#),
            ("bash", r#"{"command":"cd src && cat a.py"}"#),
            ("bash", r#"{"command":"sed -i 's/a/b/' src/a.py"}"#),
            ("bash", r#"{"command":"python src/a.py"}"#),
            ("grep", r#"{"path":"src/a.py","pattern":"x"}"#),
            ("write", r#"{"filePath":"src/a.py","content":"x"}"#),
        ] {
            assert_eq!(read(tool, args), None, "{tool} {args}");
        }
    }

    /// A call and its result as two messages.
    fn exchange(id: &str, tool: &str, args: &str, out: &str, is_error: bool) -> [Message; 2] {
        let m = |role, block| Message {
            role,
            blocks: vec![block],
            synthetic: false,
        };
        [
            m(
                crate::message::Role::Assistant,
                Block::ToolCall {
                    id: id.into(),
                    name: tool.into(),
                    arguments: args.into(),
                },
            ),
            m(
                crate::message::Role::Tool,
                Block::ToolResult {
                    call_id: id.into(),
                    name: None,
                    text: out.into(),
                    is_error,
                },
            ),
        ]
    }

    /// The call ids superseded in a history of exchanges (all kept; `compressed` ids sent
    /// compressed; the last exchange frozen as the engine freezes it).
    fn superseded(calls: &[(&str, &str, &str, &str, bool)], compressed: &[&str]) -> Vec<String> {
        let messages: Vec<Message> = calls
            .iter()
            .flat_map(|(id, tool, args, out, err)| exchange(id, tool, args, out, *err))
            .collect();
        let compressed: Vec<Vec<String>> = messages
            .iter()
            .map(|m| {
                m.result_ids()
                    .filter(|id| compressed.contains(id))
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        let n = messages.len();
        let seen: Vec<Seen> = messages
            .iter()
            .enumerate()
            .map(|(i, message)| Seen {
                number: i as u64 + 1,
                kept: true,
                frozen: i + 2 >= n,
                message,
                compressed: &compressed[i],
            })
            .collect();
        supersede(&seen).into_iter().map(|s| s.call_id).collect()
    }

    #[test]
    fn which_later_results_supersede() {
        let body = "line of the file\n".repeat(60);
        let other = "another line\n".repeat(60);
        let last = ("z", "bash", r#"{"command":"ls"}"#, "a b", false);
        let cat = r#"{"command":"cat src/a.py"}"#;
        let sed = r#"{"command":"sed -n '1,20p' src/a.py"}"#;
        // A whole `cat` supersedes an earlier partial `sed`, not the other way round.
        let got = superseded(
            &[
                ("s1", "bash", sed, &body, false),
                ("c1", "bash", cat, &body, false),
                ("s2", "bash", sed, &other, false),
                last,
            ],
            &[],
        );
        assert_eq!(got, ["s1"]);
        // The same call with another output is no reread unless it reads a file.
        let pytest = r#"{"command":"pytest"}"#;
        let got = superseded(
            &[
                ("t1", "bash", pytest, &body, false),
                ("t2", "bash", pytest, &other, false),
                last,
            ],
            &[],
        );
        assert!(got.is_empty(), "{got:?}");
        // An error, or a compressed result for a whole one, supersedes nothing; a compressed
        // result is superseded by a whole one.
        let read = r#"{"filePath":"src/a.py"}"#;
        let history = |err| {
            [
                ("r1", "read", read, body.as_str(), false),
                ("r2", "read", read, other.as_str(), err),
                ("r3", "read", read, body.as_str(), false),
                last,
            ]
        };
        assert_eq!(superseded(&history(false), &[]), ["r1", "r2"]);
        assert_eq!(superseded(&history(true), &["r3"]), [] as [&str; 0]);
        let got = superseded(
            &[
                ("r1", "read", read, &body, false),
                ("r2", "read", read, &other, false),
                last,
            ],
            &["r1"],
        );
        assert_eq!(got, ["r1"]);
        // A reference longer than the result is not worth it; the last exchange stays.
        let got = superseded(
            &[
                ("r1", "read", read, "x", false),
                ("r2", "read", read, "y", false),
                ("r3", "read", read, &body, false),
                ("r4", "read", read, &body, false),
            ],
            &[],
        );
        assert_eq!(got, ["r3"]);
    }

    #[test]
    fn arguments_are_compared_normalised() {
        assert_eq!(
            normalise(r#"{"b":1,"a":{"d":2,"c":3}}"#),
            normalise(r#"{ "a": {"c":3,"d":2}, "b": 1 }"#)
        );
        assert_ne!(normalise(r#"{"a":1}"#), normalise(r#"{"a":2}"#));
        assert_eq!(
            normalise(r#"{"arguments":"{\"b\":1,\"a\":2}"}"#),
            normalise(r#"{"a":2,"b":1}"#)
        );
    }
}
