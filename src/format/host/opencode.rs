//! OpenCode's `{info, parts}` messages, read as Anthropic messages. One OpenCode assistant
//! message holds its tool calls and their results (a `tool` part carries both), so it becomes an
//! assistant message plus a user message of `tool_result` blocks; both map back to the same
//! OpenCode message. Only what the model is shown goes into the canonical messages, so ids,
//! times, tokens and cost never change a fingerprint.

use serde_json::{Map, Value};

use super::{as_text, kind, object, text_block, Canonical, HostFormat};
use crate::error::Result;
use crate::format::Format;
use crate::rewrite::Edit;

/// The OpenCode host format.
pub struct OpenCode;

/// Id of the text part that carries the pointer (stable: OpenCode keeps part order).
const POINTER_PART_ID: &str = "prt_smarter_compact_pointer";

/// Reasoning that carries provider metadata (a signature) is replayable only verbatim.
fn is_signed(part: &Value) -> bool {
    kind(part) == Some("reasoning")
        && part
            .get("metadata")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
}

/// A text part the model is shown.
fn is_text(part: &Value) -> bool {
    kind(part) == Some("text") && !super::truthy(part.get("ignored"))
}

fn parts(msg: &Value) -> &[Value] {
    msg.get("parts")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What OpenCode sends the model for a tool part's result, and whether it is an error.
fn tool_result(part: &Value) -> (String, bool) {
    let state = part.get("state");
    let field = |k: &str| state.and_then(|s| s.get(k));
    match field("status").and_then(Value::as_str) {
        Some("completed") => {
            let compacted = field("time").and_then(|t| t.get("compacted"));
            if super::truthy(compacted) {
                ("[Old tool result content cleared]".into(), false)
            } else {
                (as_text(field("output")), false)
            }
        }
        Some("error") => (as_text(field("error")), true),
        _ => ("[Tool execution was interrupted]".into(), true),
    }
}

/// A user message's blocks, and whether every text in it is host-generated.
fn user_blocks(parts: &[Value]) -> (Vec<Value>, bool) {
    let mut blocks = Vec::new();
    let mut synthetic = true;
    for p in parts {
        match kind(p) {
            Some("text") if is_text(p) => {
                blocks.push(text_block(p.get("text").cloned().unwrap_or(Value::Null)));
                if !super::truthy(p.get("synthetic")) {
                    synthetic = false;
                }
            }
            Some("file") => {
                let url: String = as_text(p.get("url")).chars().take(200).collect();
                blocks.push(object([
                    ("type", Some("document".into())),
                    ("mime", p.get("mime").cloned()),
                    ("url", Some(url.into())),
                ]));
            }
            Some("compaction") => blocks.push(text_block("What did we do so far?")),
            Some(k @ ("subtask" | "agent")) => {
                let what = p
                    .get("prompt")
                    .filter(|v| !v.is_null())
                    .or_else(|| p.get("name"));
                blocks.push(text_block(format!("[{k}] {}", as_text(what))));
            }
            _ => {}
        }
    }
    (blocks, synthetic)
}

/// An assistant message's blocks and the `tool_result` blocks of its tool parts.
fn assistant_blocks(parts: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let mut blocks = Vec::new();
    let mut results = Vec::new();
    for p in parts {
        match kind(p) {
            Some("reasoning") => blocks.push(object([
                ("type", Some("thinking".into())),
                ("thinking", Some(as_text(p.get("text")).into())),
                (
                    "signature",
                    is_signed(p).then(|| {
                        p.get("metadata")
                            .map_or(String::new(), Value::to_string)
                            .into()
                    }),
                ),
            ])),
            Some("text") if is_text(p) => {
                blocks.push(text_block(p.get("text").cloned().unwrap_or(Value::Null)))
            }
            Some("tool") => {
                let input = p
                    .get("state")
                    .and_then(|s| s.get("input"))
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                blocks.push(object([
                    ("type", Some("tool_use".into())),
                    ("id", p.get("callID").cloned()),
                    ("name", p.get("tool").cloned()),
                    ("input", Some(input)),
                ]));
                let (text, error) = tool_result(p);
                results.push(object([
                    ("type", Some("tool_result".into())),
                    ("tool_use_id", p.get("callID").cloned()),
                    ("content", Some(text.into())),
                    ("is_error", error.then_some(Value::Bool(true))),
                ]));
            }
            _ => {}
        }
    }
    (blocks, results)
}

fn or_empty(blocks: Vec<Value>) -> Value {
    if blocks.is_empty() {
        Value::Array(vec![text_block("")])
    } else {
        Value::Array(blocks)
    }
}

impl HostFormat for OpenCode {
    fn canonical(&self) -> Format {
        Format::Anthropic
    }

    fn by_item(&self) -> bool {
        true
    }

    fn read(&self, items: &[Value]) -> Result<Vec<Canonical>> {
        let mut out = Vec::with_capacity(items.len() + items.len() / 2);
        for (i, m) in items.iter().enumerate() {
            let role = m.get("info").and_then(|info| info.get("role"));
            if role.and_then(Value::as_str) == Some("user") {
                let (blocks, synthetic) = user_blocks(parts(m));
                let message = object([
                    ("role", Some("user".into())),
                    ("content", Some(or_empty(blocks))),
                    ("synthetic", synthetic.then_some(Value::Bool(true))),
                ]);
                out.push(Canonical {
                    message,
                    items: i..i + 1,
                });
                continue;
            }
            let (blocks, results) = assistant_blocks(parts(m));
            let message = object([
                ("role", Some("assistant".into())),
                ("content", Some(or_empty(blocks))),
            ]);
            out.push(Canonical {
                message,
                items: i..i + 1,
            });
            if !results.is_empty() {
                let message = object([
                    ("role", Some("user".into())),
                    ("content", Some(Value::Array(results))),
                ]);
                out.push(Canonical {
                    message,
                    items: i..i + 1,
                });
            }
        }
        Ok(out)
    }

    fn apply(&self, items: &mut Vec<(usize, Value)>, edit: &Edit) {
        for (_, m) in items.iter_mut() {
            let info = m.get("info").cloned();
            let Some(parts) = m.get_mut("parts").and_then(Value::as_array_mut) else {
                if let (Edit::Prepend(text), Some(obj)) = (edit, m.as_object_mut()) {
                    obj.insert(
                        "parts".into(),
                        Value::Array(vec![pointer_part(text, info.as_ref())]),
                    );
                }
                continue;
            };
            match edit {
                Edit::Compress { call_id, text } => {
                    for p in parts.iter_mut() {
                        let hit = kind(p) == Some("tool")
                            && p.get("callID").and_then(Value::as_str) == Some(call_id);
                        let Some(state) = p.get_mut("state").and_then(Value::as_object_mut) else {
                            continue;
                        };
                        if hit {
                            let key =
                                if state.get("status").and_then(Value::as_str) == Some("error") {
                                    "error"
                                } else {
                                    "output"
                                };
                            state.insert(key.into(), Value::String(text.clone()));
                        }
                    }
                }
                Edit::CompressText { nth, text } => {
                    if let Some(p) = parts.iter_mut().filter(|p| is_text(p)).nth(*nth) {
                        if let Some(obj) = p.as_object_mut() {
                            obj.insert("text".into(), Value::String(text.clone()));
                        }
                    }
                }
                Edit::Prepend(text) => parts.insert(0, pointer_part(text, info.as_ref())),
                Edit::StripThinking {} => parts.retain(|p| !is_signed(p)),
            }
        }
    }
}

/// The synthetic text part carrying the pointer, tied to its message the way OpenCode ties parts.
fn pointer_part(text: &str, info: Option<&Value>) -> Value {
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .filter(|v| !v.is_null())
            .cloned()
    };
    object([
        ("type", Some("text".into())),
        ("text", Some(text.into())),
        ("synthetic", Some(Value::Bool(true))),
        ("id", Some(POINTER_PART_ID.into())),
        ("sessionID", field("sessionID")),
        ("messageID", field("id")),
    ])
}
