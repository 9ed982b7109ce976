//! OpenAI Responses `input` items, read as Anthropic messages. The consecutive items of one model
//! turn (reasoning, an assistant message, function / custom / shell calls) become one assistant
//! message and the outputs after them one user message of `tool_result` blocks, so a reasoning
//! item always leaves or stays with the call it precedes, and calls stay with their outputs.
//! Reasoning with `encrypted_content` is signed thinking: kept verbatim or removed whole.

use serde_json::{Map, Value};

use super::{kind, object, text_block, Canonical, HostFormat};
use crate::error::Result;
use crate::format::Format;
use crate::rewrite::Edit;

/// The OpenAI Responses host format.
pub struct Responses;

/// Items a model turn is made of.
const TURN_ITEMS: &[&str] = &[
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "image_generation_call",
    "code_interpreter_call",
    "mcp_call",
];
/// Items that answer a call.
const OUTPUT_ITEMS: &[&str] = &[
    "function_call_output",
    "custom_tool_call_output",
    "local_shell_call_output",
    "computer_call_output",
];
/// Tags that open user messages a client generates itself (Codex's environment and instructions).
const SYNTHETIC_TAGS: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
];
/// How much of an item the engine does not interpret is kept in its opaque block.
const OPAQUE_CHARS: usize = 2000;

/// `type`, or `message` for an item that has only a role.
fn item_kind(item: &Value) -> &str {
    kind(item).unwrap_or(if item.get("role").is_some() {
        "message"
    } else {
        "unknown"
    })
}

/// The texts of a content value: a string, or the parts with a string `text`.
fn parts_text(content: Option<&Value>) -> Vec<&str> {
    match content {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

fn is_signed(item: &Value) -> bool {
    item_kind(item) == "reasoning" && super::truthy(item.get("encrypted_content"))
}

/// The canonical block of one turn item.
fn turn_block(item: &Value, kind: &str) -> Value {
    let call = |name: Option<Value>, input: Value| {
        object([
            ("type", Some("tool_use".into())),
            ("id", item.get("call_id").cloned()),
            ("name", name),
            ("input", Some(input)),
        ])
    };
    let wrap = |key: &str| object([(key, item.get(key).cloned())]);
    match kind {
        "reasoning" => object([
            ("type", Some("thinking".into())),
            (
                "thinking",
                Some(parts_text(item.get("summary")).join("\n").into()),
            ),
            (
                "signature",
                is_signed(item).then(|| item["encrypted_content"].clone()),
            ),
        ]),
        "function_call" => call(item.get("name").cloned(), wrap("arguments")),
        "custom_tool_call" => call(item.get("name").cloned(), wrap("input")),
        "local_shell_call" => call(
            Some("local_shell".into()),
            item.get("action")
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new())),
        ),
        other => {
            let text: String = item.to_string().chars().take(OPAQUE_CHARS).collect();
            object([("type", Some(other.into())), ("item", Some(text.into()))])
        }
    }
}

/// A canonical message being filled from consecutive items.
struct Open {
    blocks: Vec<Value>,
    start: usize,
    end: usize,
}

fn close(out: &mut Vec<Canonical>, open: &mut Option<Open>, role: &str) {
    if let Some(o) = open.take() {
        out.push(Canonical {
            message: object([
                ("role", Some(role.into())),
                ("content", Some(Value::Array(o.blocks))),
            ]),
            items: o.start..o.end,
        });
    }
}

fn add(open: &mut Option<Open>, i: usize, blocks: impl IntoIterator<Item = Value>) {
    let o = open.get_or_insert(Open {
        blocks: Vec::new(),
        start: i,
        end: i,
    });
    o.blocks.extend(blocks);
    o.end = i + 1;
}

impl HostFormat for Responses {
    fn canonical(&self) -> Format {
        Format::Anthropic
    }

    fn read(&self, items: &[Value]) -> Result<Vec<Canonical>> {
        let mut out = Vec::new();
        let mut turn: Option<Open> = None;
        let mut outputs: Option<Open> = None;
        for (i, item) in items.iter().enumerate() {
            let k = item_kind(item);
            let role = item.get("role").and_then(Value::as_str);
            if (k == "message" && role == Some("assistant")) || TURN_ITEMS.contains(&k) {
                if outputs.is_some() {
                    close(&mut out, &mut turn, "assistant");
                    close(&mut out, &mut outputs, "user");
                }
                let blocks: Vec<Value> = if k == "message" {
                    parts_text(item.get("content"))
                        .into_iter()
                        .map(text_block)
                        .collect()
                } else {
                    vec![turn_block(item, k)]
                };
                add(&mut turn, i, blocks);
                continue;
            }
            if OUTPUT_ITEMS.contains(&k) {
                let output = item.get("output");
                let text = match output {
                    Some(Value::String(s)) => s.clone(),
                    o => parts_text(o).join("\n"),
                };
                let block = object([
                    ("type", Some("tool_result".into())),
                    ("tool_use_id", item.get("call_id").cloned()),
                    ("content", Some(text.into())),
                ]);
                add(&mut outputs, i, [block]);
                continue;
            }
            close(&mut out, &mut turn, "assistant");
            close(&mut out, &mut outputs, "user");
            let texts = parts_text(item.get("content"));
            let role = match role {
                Some("developer" | "system") => "system",
                Some("user") => "user",
                _ => "assistant",
            };
            let synthetic = role == "user"
                && texts.first().is_some_and(|t| {
                    let t = t.trim_start();
                    SYNTHETIC_TAGS.iter().any(|tag| t.starts_with(tag))
                });
            let mut blocks: Vec<Value> = texts.into_iter().map(text_block).collect();
            if blocks.is_empty() {
                blocks.push(text_block(""));
            }
            out.push(Canonical {
                message: object([
                    ("role", Some(role.into())),
                    ("content", Some(Value::Array(blocks))),
                    ("synthetic", synthetic.then_some(Value::Bool(true))),
                ]),
                items: i..i + 1,
            });
        }
        close(&mut out, &mut turn, "assistant");
        close(&mut out, &mut outputs, "user");
        Ok(out)
    }

    fn apply(&self, items: &mut Vec<(usize, Value)>, edit: &Edit) {
        match edit {
            Edit::Compress { call_id, text } => {
                for (_, it) in items.iter_mut() {
                    let hit = OUTPUT_ITEMS.contains(&item_kind(it))
                        && it.get("call_id").and_then(Value::as_str) == Some(call_id);
                    if let (true, Some(obj)) = (hit, it.as_object_mut()) {
                        obj.insert("output".into(), Value::String(text.clone()));
                    }
                }
            }
            Edit::CompressText { nth, text } => {
                let mut n = 0;
                for (_, it) in items
                    .iter_mut()
                    .filter(|(_, it)| item_kind(it) == "message")
                {
                    match it.get_mut("content") {
                        Some(Value::String(s)) => {
                            if n == *nth {
                                *s = text.clone();
                            }
                            n += 1;
                        }
                        Some(Value::Array(parts)) => {
                            for p in parts
                                .iter_mut()
                                .filter(|p| p.get("text").is_some_and(Value::is_string))
                            {
                                if n == *nth {
                                    p["text"] = Value::String(text.clone());
                                }
                                n += 1;
                            }
                        }
                        _ => {}
                    }
                }
            }
            Edit::Prepend(text) => {
                let Some((_, Value::Object(first))) = items.first_mut() else {
                    return;
                };
                let part = object([
                    ("type", Some("input_text".into())),
                    ("text", Some(text.as_str().into())),
                ]);
                match first.get_mut("content") {
                    Some(c @ Value::String(_)) => {
                        let old = c.take();
                        let old =
                            object([("type", Some("input_text".into())), ("text", Some(old))]);
                        *c = Value::Array(vec![part, old]);
                    }
                    Some(Value::Array(parts)) => parts.insert(0, part),
                    Some(other) => *other = Value::Array(vec![part]),
                    None => {
                        first.insert("content".into(), Value::Array(vec![part]));
                    }
                }
            }
            Edit::StripThinking {} => items.retain(|(_, it)| !is_signed(it)),
        }
    }
}
