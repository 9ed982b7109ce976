//! Pi's agent messages, read as OpenAI chat messages one to one. Pi's `context` event gives
//! user, assistant and toolResult messages plus its own kinds (custom messages, bash runs,
//! summaries) that it shows the model as user text; only what the model sees goes into the
//! canonical message, so timestamps and usage never change a fingerprint.

use serde_json::{Map, Value};

use super::{as_text, kind, object, text_block, truthy, Canonical, HostFormat};
use crate::error::Result;
use crate::format::Format;
use crate::rewrite::Edit;

/// The Pi host format.
pub struct Pi;

fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

/// Signed or redacted thinking: replayable only verbatim.
fn is_signed(b: &Value) -> bool {
    kind(b) == Some("thinking") && (truthy(b.get("thinkingSignature")) || truthy(b.get("redacted")))
}

/// The text blocks of a content value joined by newlines (a string is its own text).
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| kind(b) == Some("text"))
            .map(|b| as_text(b.get("text")))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// User content as OpenAI parts; images become a marker with their size, never their bytes.
fn user_content(content: Option<&Value>) -> Value {
    match content {
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Array(blocks)) => Value::Array(
            blocks
                .iter()
                .map(|b| {
                    if kind(b) == Some("image") {
                        let bytes = b.get("data").and_then(Value::as_str).map_or(0, str::len);
                        object([
                            ("type", Some("image".into())),
                            ("mime", b.get("mimeType").cloned()),
                            ("bytes", Some(bytes.into())),
                        ])
                    } else {
                        text_block(as_text(b.get("text")))
                    }
                })
                .collect(),
        ),
        _ => Value::Array(Vec::new()),
    }
}

/// The text Pi sends the model for its own message kinds.
fn synthetic_text(m: &Value) -> String {
    match role(m) {
        Some("bashExecution") => format!(
            "Ran `{}`\n{}",
            as_text(m.get("command")),
            as_text(m.get("output"))
        ),
        Some("branchSummary" | "compactionSummary") => as_text(m.get("summary")),
        _ => match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            c => Some(text_of(c))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| m.to_string()),
        },
    }
}

fn assistant(m: &Value) -> Value {
    let blocks = match m.get("content") {
        Some(Value::Array(b)) => b.clone(),
        c => vec![text_block(as_text(c))],
    };
    let texts: Vec<Value> = blocks
        .iter()
        .filter(|b| kind(b) == Some("text"))
        .map(|b| text_block(b.get("text").cloned().unwrap_or(Value::Null)))
        .collect();
    let thinking = |signed: bool| {
        blocks
            .iter()
            .filter(move |b| kind(b) == Some("thinking") && is_signed(b) == signed)
    };
    let plain: Vec<String> = thinking(false)
        .map(|b| as_text(b.get("thinking")))
        .collect();
    let signed: Vec<Value> = thinking(true)
        .map(|b| {
            let sig = b
                .get("thinkingSignature")
                .filter(|v| !v.is_null())
                .map_or_else(|| "redacted".to_string(), |v| as_text(Some(v)));
            object([
                ("type", Some("thinking".into())),
                ("thinking", Some(as_text(b.get("thinking")).into())),
                ("signature", Some(sig.into())),
            ])
        })
        .collect();
    let calls: Vec<Value> = blocks
        .iter()
        .filter(|b| kind(b) == Some("toolCall"))
        .map(|c| {
            let args = c
                .get("arguments")
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            object([
                ("id", c.get("id").cloned()),
                ("type", Some("function".into())),
                (
                    "function",
                    Some(object([
                        ("name", c.get("name").cloned()),
                        ("arguments", Some(args.to_string().into())),
                    ])),
                ),
            ])
        })
        .collect();
    let some = |v: Vec<Value>| (!v.is_empty()).then_some(Value::Array(v));
    object([
        ("role", Some("assistant".into())),
        ("content", Some(some(texts).unwrap_or(Value::Null))),
        (
            "reasoning_content",
            (!plain.is_empty()).then(|| plain.join("\n").into()),
        ),
        ("thinking_blocks", some(signed)),
        ("tool_calls", some(calls)),
    ])
}

fn canonical_one(m: &Value) -> Value {
    match role(m) {
        Some("user") => object([
            ("role", Some("user".into())),
            ("content", Some(user_content(m.get("content")))),
        ]),
        Some("assistant") => assistant(m),
        Some("toolResult") => object([
            ("role", Some("tool".into())),
            ("tool_call_id", m.get("toolCallId").cloned()),
            ("name", m.get("toolName").cloned()),
            ("content", Some(text_of(m.get("content")).into())),
        ]),
        _ => object([
            ("role", Some("user".into())),
            ("content", Some(synthetic_text(m).into())),
            ("synthetic", Some(Value::Bool(true))),
        ]),
    }
}

impl HostFormat for Pi {
    fn canonical(&self) -> Format {
        Format::OpenAi
    }

    fn by_item(&self) -> bool {
        true
    }

    fn read(&self, items: &[Value]) -> Result<Vec<Canonical>> {
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, m)| Canonical {
                message: canonical_one(m),
                items: i..i + 1,
            })
            .collect())
    }

    fn apply(&self, items: &mut Vec<(usize, Value)>, edit: &Edit) {
        for (_, m) in items.iter_mut() {
            let r = role(m).map(str::to_string);
            let Some(obj) = m.as_object_mut() else {
                continue;
            };
            match (edit, r.as_deref()) {
                (Edit::Compress { text, .. }, Some("toolResult")) => {
                    obj.insert(
                        "content".into(),
                        Value::Array(vec![text_block(text.as_str())]),
                    );
                }
                (Edit::CompressText { nth, text }, Some("assistant")) => {
                    let Some(Value::Array(blocks)) = obj.get_mut("content") else {
                        continue;
                    };
                    let found = blocks
                        .iter_mut()
                        .filter(|b| kind(b) == Some("text"))
                        .nth(*nth);
                    if let Some(Value::Object(b)) = found {
                        b.insert("text".into(), Value::String(text.clone()));
                    }
                }
                (Edit::Prepend(text), Some("user")) => match obj.get_mut("content") {
                    Some(Value::String(s)) => *s = format!("{text}\n\n{s}"),
                    Some(Value::Array(blocks)) => blocks.insert(0, text_block(text.as_str())),
                    _ => {
                        obj.insert(
                            "content".into(),
                            Value::Array(vec![text_block(text.as_str())]),
                        );
                    }
                },
                (Edit::StripThinking {}, Some("assistant")) => {
                    if let Some(Value::Array(blocks)) = obj.get_mut("content") {
                        blocks.retain(|b| !is_signed(b));
                    }
                }
                _ => {}
            }
        }
    }
}
