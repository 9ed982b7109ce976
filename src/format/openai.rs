//! OpenAI Chat Completions messages. Also reads LiteLLM's `thinking_blocks` (signed Anthropic
//! thinking carried through the OpenAI format) and the `reasoning_content` field some
//! OpenAI-compatible providers add.

use serde_json::Value;

use super::{content_text, is_synthetic, object, other, string_field, WireFormat};
use crate::error::{Error, Result};
use crate::message::{Block, Message, Role};

/// The OpenAI Chat Completions adapter.
pub struct OpenAi;

impl WireFormat for OpenAi {
    fn view(&self, msg: &Value, index: usize) -> Result<Message> {
        let obj = object(msg, index)?;
        let role = match string_field(obj, "role", index)? {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => return Err(Error::unknown_role(index, other)),
        };
        let mut blocks = Vec::new();
        if role == Role::Tool {
            let call_id = string_field(obj, "tool_call_id", index)?.to_string();
            let text = content_text(obj.get("content"), index)?;
            let name = obj.get("name").and_then(Value::as_str).map(str::to_string);
            blocks.push(Block::ToolResult {
                call_id,
                name,
                text,
                is_error: false,
            });
            return Ok(Message {
                role,
                blocks,
                synthetic: is_synthetic(obj),
            });
        }
        if role == Role::Assistant {
            read_thinking(obj, index, &mut blocks)?;
        }
        read_content(obj.get("content"), index, &mut blocks)?;
        if role == Role::Assistant {
            read_tool_calls(obj.get("tool_calls"), index, &mut blocks)?;
        }
        Ok(Message {
            role,
            blocks,
            synthetic: is_synthetic(obj),
        })
    }

    fn set_tool_result_text(&self, msg: &mut Value, call_id: &str, text: &str) {
        if let Some(obj) = msg.as_object_mut() {
            if obj.get("tool_call_id").and_then(Value::as_str) == Some(call_id) {
                obj.insert("content".into(), Value::String(text.into()));
            }
        }
    }

    fn string_content_as_parts(&self) -> bool {
        false
    }

    fn strip_signed_thinking(&self, msg: &mut Value) -> bool {
        let Some(obj) = msg.as_object_mut() else {
            return false;
        };
        let has_other_content = obj.get("tool_calls").is_some_and(|c| !c.is_null())
            || obj.get("content").is_some_and(|c| match c {
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => false,
            });
        if has_other_content && obj.contains_key("thinking_blocks") {
            obj.shift_remove("thinking_blocks");
            return true;
        }
        false
    }
}

fn read_content(content: Option<&Value>, index: usize, blocks: &mut Vec<Block>) -> Result<()> {
    match content {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => blocks.push(Block::Text(s.clone())),
        Some(Value::Array(parts)) => {
            for part in parts {
                let obj = part
                    .as_object()
                    .ok_or_else(|| Error::malformed(index, "content parts must be objects"))?;
                match obj.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        blocks.push(Block::Text(string_field(obj, "text", index)?.into()))
                    }
                    Some("image_url" | "input_audio" | "file" | "image") => {
                        blocks.push(Block::Image)
                    }
                    _ => blocks.push(other(part)),
                }
            }
        }
        Some(_) => {
            return Err(Error::malformed(
                index,
                "content must be a string, an array of parts or null",
            ))
        }
    }
    Ok(())
}

fn read_tool_calls(calls: Option<&Value>, index: usize, blocks: &mut Vec<Block>) -> Result<()> {
    let calls = match calls {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(calls)) => calls,
        Some(_) => return Err(Error::malformed(index, "tool_calls must be an array")),
    };
    for call in calls {
        let obj = call
            .as_object()
            .ok_or_else(|| Error::malformed(index, "a tool call must be an object"))?;
        let id = string_field(obj, "id", index)?.to_string();
        let (name, arguments) = if let Some(f) = obj.get("function") {
            let f = f
                .as_object()
                .ok_or_else(|| Error::malformed(index, "tool call function must be an object"))?;
            (
                string_field(f, "name", index)?,
                string_field(f, "arguments", index)?,
            )
        } else if let Some(c) = obj.get("custom").and_then(Value::as_object) {
            (
                string_field(c, "name", index)?,
                string_field(c, "input", index)?,
            )
        } else {
            return Err(Error::malformed(index, "tool call without function"));
        };
        blocks.push(Block::ToolCall {
            id,
            name: name.to_string(),
            arguments: arguments.to_string(),
        });
    }
    Ok(())
}

fn read_thinking(
    obj: &serde_json::Map<String, Value>,
    index: usize,
    blocks: &mut Vec<Block>,
) -> Result<()> {
    if let Some(Value::String(r)) = obj.get("reasoning_content") {
        blocks.push(Block::Thinking {
            text: r.clone(),
            signed: false,
        });
    }
    match obj.get("thinking_blocks") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(list)) => {
            for b in list {
                let text = b
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                blocks.push(Block::Thinking {
                    text: text.to_string(),
                    signed: true,
                });
            }
            Ok(())
        }
        Some(_) => Err(Error::malformed(index, "thinking_blocks must be an array")),
    }
}
