//! Wire formats. Each adapter reads a canonical [`Message`] view out of a wire message and makes
//! the few surgical edits the engine needs on a wire message; it never rebuilds a message, so
//! fields it does not know survive unchanged. Host message lists (OpenCode, Pi, OpenAI
//! Responses) are read into one of the two canonical formats and edited in [`host`].

mod anthropic;
pub mod host;
mod json;
mod openai;

pub use json::{parse_message, replace_lone_surrogates};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::message::{Block, Message};

/// A wire format the engine can read and edit.
pub trait WireFormat: Sync {
    /// The canonical view of one wire message (`index` is its position, for error messages).
    fn view(&self, msg: &Value, index: usize) -> Result<Message>;
    /// Replaces the content of the tool result answering `call_id` with `text`.
    fn set_tool_result_text(&self, msg: &mut Value, call_id: &str, text: &str);
    /// Whether a string `content` becomes a list of text parts when text is put in front of it
    /// (otherwise the text is joined in front of the string).
    fn string_content_as_parts(&self) -> bool;
    /// Replaces the `nth` text block (counting text blocks only, as in the view) with `text`.
    fn set_text(&self, msg: &mut Value, nth: usize, text: &str) {
        set_nth_text(msg.get_mut("content"), nth, text);
    }
    /// Puts `text` in front of the message's content as its own text.
    fn prepend_text(&self, msg: &mut Value, text: &str) {
        if let Some(obj) = msg.as_object_mut() {
            let content = obj.entry("content").or_insert(Value::Null);
            prepend_to_content(content, text, self.string_content_as_parts());
        }
    }
    /// Removes signed and redacted thinking; returns false (and leaves the message as it was)
    /// when there is none or removing it would leave the message empty.
    fn strip_signed_thinking(&self, msg: &mut Value) -> bool;
}

/// The wire formats of the public API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI Chat Completions: `tool_calls`, role `tool` with `tool_call_id`.
    OpenAi,
    /// Anthropic Messages: `tool_use` / `tool_result` blocks, `thinking` with `signature`.
    Anthropic,
    /// OpenAI Responses `input` items (read as Anthropic messages).
    Responses,
    /// OpenCode's `{info, parts}` messages (read as Anthropic messages).
    OpenCode,
    /// Pi's agent messages (read as OpenAI messages).
    Pi,
}

impl Format {
    /// Every format, in the order of [`Format::NAMES`].
    pub const ALL: [Format; 5] = [
        Format::OpenAi,
        Format::Anthropic,
        Format::Responses,
        Format::OpenCode,
        Format::Pi,
    ];
    /// The names of the formats in the API.
    pub const NAMES: [&'static str; 5] = ["openai", "anthropic", "responses", "opencode", "pi"];

    /// Parses a format name as used in the API (one of [`Format::NAMES`]).
    pub fn parse(name: &str) -> Result<Format> {
        Format::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Format::ALL[i])
            .ok_or_else(|| Error::UnknownFormat(name.chars().take(40).collect()))
    }

    /// The adapter of the canonical messages: this format's own, or for a host format the one
    /// its messages are read into.
    pub fn adapter(self) -> &'static dyn WireFormat {
        match self {
            Format::OpenAi | Format::Pi => &openai::OpenAi,
            Format::Anthropic | Format::Responses | Format::OpenCode => &anthropic::Anthropic,
        }
    }

    /// The host format, for the formats whose items are not canonical messages themselves.
    pub fn host(self) -> Option<&'static dyn host::HostFormat> {
        match self {
            Format::OpenAi | Format::Anthropic => None,
            Format::Responses => Some(&host::Responses),
            Format::OpenCode => Some(&host::OpenCode),
            Format::Pi => Some(&host::Pi),
        }
    }
}

/// The message as a JSON object, or a `Malformed` error.
fn object(msg: &Value, index: usize) -> Result<&Map<String, Value>> {
    msg.as_object()
        .ok_or_else(|| Error::malformed(index, "a message must be a JSON object"))
}

/// `"synthetic": true` marks a message a host generated rather than a human typed (host adapters
/// set it on Pi's custom and summary messages and on OpenCode's synthetic text); such a message is
/// never the task turn nor the last real user turn.
fn is_synthetic(obj: &Map<String, Value>) -> bool {
    obj.get("synthetic") == Some(&Value::Bool(true))
}

/// A required string field.
fn string_field<'a>(obj: &'a Map<String, Value>, key: &str, index: usize) -> Result<&'a str> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(Error::malformed(index, format!("missing {key}"))),
        Some(_) => Err(Error::malformed(index, format!("{key} must be a string"))),
    }
}

/// Text of a content value that may be a string, null or an array of `{type:"text", text}` parts;
/// other parts are skipped. Used for tool results.
fn content_text(content: Option<&Value>, index: usize) -> Result<String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            for part in parts {
                let obj = part
                    .as_object()
                    .ok_or_else(|| Error::malformed(index, "content parts must be objects"))?;
                if obj.get("type").and_then(Value::as_str) == Some("text") {
                    texts.push(string_field(obj, "text", index)?);
                }
            }
            Ok(texts.join("\n"))
        }
        Some(_) => Err(Error::malformed(
            index,
            "content must be a string, an array of parts or null",
        )),
    }
}

/// Opaque JSON text of a block the engine does not interpret.
fn other(v: &Value) -> Block {
    Block::Other(v.to_string())
}

/// Prepends `text` to a content value: a string gets the text and a blank line in front, an
/// array gets a new text part, a missing content becomes the text.
fn prepend_to_content(content: &mut Value, text: &str, string_as_parts: bool) {
    match content {
        Value::String(s) if string_as_parts => {
            let old = std::mem::take(s);
            *content = Value::Array(vec![text_part(text), text_part(&old)]);
        }
        Value::String(s) => *s = format!("{text}\n\n{s}"),
        Value::Array(parts) => parts.insert(0, text_part(text)),
        other => *other = Value::String(text.to_string()),
    }
}

/// `{"type": "text", "text": text}`.
fn text_part(text: &str) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("text".into()));
    m.insert("text".into(), Value::String(text.into()));
    Value::Object(m)
}

/// Replaces the `nth` text of a content value: a string content is text 0, an array counts its
/// `{type: "text"}` parts.
fn set_nth_text(content: Option<&mut Value>, nth: usize, text: &str) {
    match content {
        Some(Value::String(s)) if nth == 0 => *s = text.to_string(),
        Some(Value::Array(parts)) => {
            let found = parts
                .iter_mut()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .nth(nth);
            if let Some(Value::Object(p)) = found {
                p.insert("text".into(), Value::String(text.into()));
            }
        }
        _ => {}
    }
}
