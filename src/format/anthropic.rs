//! Anthropic Messages: content blocks `text`, `thinking` (+`signature`), `redacted_thinking`,
//! `tool_use`, `tool_result`, `image`, `document`; anything else is kept opaque.

use serde_json::Value;

use super::{content_text, is_synthetic, object, other, string_field, WireFormat};
use crate::error::{Error, Result};
use crate::message::{Block, Message, Role};

/// The Anthropic Messages adapter.
pub struct Anthropic;

impl WireFormat for Anthropic {
    fn view(&self, msg: &Value, index: usize) -> Result<Message> {
        let obj = object(msg, index)?;
        let role = match string_field(obj, "role", index)? {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            other => return Err(Error::unknown_role(index, other)),
        };
        let blocks = match obj.get("content") {
            Some(Value::String(s)) => vec![Block::Text(s.clone())],
            Some(Value::Array(list)) => list
                .iter()
                .map(|b| read_block(b, index))
                .collect::<Result<_>>()?,
            None | Some(Value::Null) => return Err(Error::malformed(index, "missing content")),
            Some(_) => {
                return Err(Error::malformed(
                    index,
                    "content must be a string or an array of blocks",
                ))
            }
        };
        Ok(Message {
            role,
            blocks,
            synthetic: is_synthetic(obj),
        })
    }

    fn set_tool_result_text(&self, msg: &mut Value, call_id: &str, text: &str) {
        let Some(blocks) = msg.get_mut("content").and_then(Value::as_array_mut) else {
            return;
        };
        for b in blocks {
            let is_it = b.get("type").and_then(Value::as_str) == Some("tool_result")
                && b.get("tool_use_id").and_then(Value::as_str) == Some(call_id);
            if let (true, Some(obj)) = (is_it, b.as_object_mut()) {
                obj.insert("content".into(), Value::String(text.into()));
            }
        }
    }

    fn string_content_as_parts(&self) -> bool {
        true
    }

    fn strip_signed_thinking(&self, msg: &mut Value) -> bool {
        let Some(blocks) = msg.get_mut("content").and_then(Value::as_array_mut) else {
            return false;
        };
        let is_signed = |b: &Value| match b.get("type").and_then(Value::as_str) {
            Some("redacted_thinking") => true,
            Some("thinking") => b.get("signature").is_some_and(|s| !s.is_null()),
            _ => false,
        };
        let kept = blocks.iter().filter(|b| !is_signed(b)).count();
        if kept == blocks.len() || kept == 0 {
            return false;
        }
        blocks.retain(|b| !is_signed(b));
        true
    }
}

fn read_block(b: &Value, index: usize) -> Result<Block> {
    let obj = b
        .as_object()
        .ok_or_else(|| Error::malformed(index, "content blocks must be objects"))?;
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or_default();
    Ok(match kind {
        "text" => Block::Text(string_field(obj, "text", index)?.to_string()),
        "thinking" => Block::Thinking {
            text: obj
                .get("thinking")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            signed: obj.get("signature").is_some_and(|s| !s.is_null()),
        },
        "redacted_thinking" => Block::Thinking {
            text: String::new(),
            signed: true,
        },
        "tool_use" => Block::ToolCall {
            id: string_field(obj, "id", index)?.to_string(),
            name: obj
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            arguments: obj.get("input").map(Value::to_string).unwrap_or_default(),
        },
        "tool_result" => Block::ToolResult {
            call_id: string_field(obj, "tool_use_id", index)?.to_string(),
            name: None,
            text: content_text(obj.get("content"), index)?,
            is_error: obj
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        "image" | "document" => Block::Image,
        _ => other(b),
    })
}
