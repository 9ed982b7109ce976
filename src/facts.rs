//! What the engine remembers about each message it has seen, keyed by chained fingerprint.

use serde::{Deserialize, Serialize};

use crate::compress::{compress, Compressed};
use crate::fingerprint::Fp;
use crate::format::Format;
use crate::message::{Block, Message, Role};
use crate::tokens::{estimate_message, estimate_text};

/// Which part of a message is sent compressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The tool result answering this call id.
    ToolResult(String),
    /// The n-th text block of an assistant message (0-based, counting text blocks only).
    Text(usize),
}

/// A part of a message that is sent compressed (decided once, at first sight).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressedPart {
    /// The part.
    pub part: Part,
    /// Id of the blob holding its full text.
    pub blob_id: String,
}

/// The facts about one message that planning and re-applying a cut need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MsgInfo {
    /// Chained fingerprint (names the message and its whole history).
    pub fp: Fp,
    /// Who speaks.
    #[serde(with = "role_name")]
    pub role: Role,
    /// A real user turn (human text, not tool results, not synthetic).
    pub real_user: bool,
    /// Number of real user turns up to and including this message.
    pub turn: u32,
    /// Estimated tokens as received.
    pub tokens: u32,
    /// Estimated tokens as sent (after compression of its tool results).
    pub sent_tokens: u32,
    /// Tool calls it makes: (id, tool name). (Boxed slices, here and below: a session keeps
    /// one of these per message, and a slice holds no spare capacity.)
    pub calls: Box<[(String, String)]>,
    /// Call ids it answers.
    pub results: Box<[String]>,
    /// Carries signed or redacted thinking.
    pub signed_thinking: bool,
    /// Its parts that are sent compressed.
    pub compressed: Box<[CompressedPart]>,
    /// Carries a call or result of a protected tool.
    pub protected: bool,
    /// Fingerprints of its calls' tool names and arguments: the same key means the same call.
    #[serde(default, skip_serializing_if = "<[Fp]>::is_empty")]
    pub call_keys: Box<[Fp]>,
    /// The trim regret it shows, decided when it is first seen under a cut.
    #[serde(default, skip_serializing_if = "Regret::is_empty")]
    pub regret: Regret,
}

/// Trim regret: what the agent had to do because a cut took something out of its view. On a
/// message it is 0 or 1 of each; summed, the session's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Regret {
    /// Results of the recall tools (`smart_compact_get`, `_search`, `_sql`) received while a cut
    /// was in force: the agent fetched back what the cut had removed.
    #[serde(default)]
    pub recalls: u32,
    /// Tool calls made again, same tool and arguments, while a cut that had removed the first
    /// one was in force.
    #[serde(default)]
    pub repeats: u32,
}

impl Regret {
    /// Neither a recall nor a repeat.
    pub fn is_empty(&self) -> bool {
        self.recalls == 0 && self.repeats == 0
    }

    /// Adds `other` to these totals.
    pub fn add(&mut self, other: Regret) {
        self.recalls += other.recalls;
        self.repeats += other.repeats;
    }
}

/// The key of a call: its tool name and its arguments (re-serialised when they are JSON, so
/// that spacing does not make two calls differ).
pub fn call_key(name: &str, arguments: &str) -> Fp {
    let args = serde_json::from_str::<serde_json::Value>(arguments)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| arguments.to_string());
    Fp::START.then(name.as_bytes()).then(args.as_bytes())
}

/// A tool output carried by a newly seen message (its text stays in the message's JSON until
/// the store indexes it).
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The call it answers.
    pub call_id: String,
    /// Tool name when known.
    pub tool_name: Option<String>,
    /// Its text is empty or only whitespace.
    pub blank: bool,
    /// Set when the output is sent compressed.
    pub blob_id: Option<String>,
}

/// A newly seen message: its facts plus what goes into the store once. It borrows its JSON
/// from the request, and the texts the store indexes are taken from that JSON as each message
/// is written ([`NewMessage::texts`]), so a request with many new messages holds each one's
/// bytes once.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    /// The facts kept in memory.
    pub info: MsgInfo,
    /// The wire JSON as received.
    pub json: &'a str,
    /// The wire format of `json`.
    pub format: Format,
    /// Its tool outputs, in order.
    pub outputs: Vec<Output>,
    /// Tool name (of the call it makes or the result it carries).
    pub tool_name: Option<String>,
    /// Tool call id (of the result it carries, or the first call it makes).
    pub tool_call_id: Option<String>,
}

/// The texts of a new message the store indexes.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageTexts {
    /// All its text (tool outputs uncompressed), for the `messages.text` column.
    pub text: String,
    /// Its text without tool outputs (those are indexed line by line).
    pub prose: String,
    /// The text of each tool output, in the order of [`NewMessage::outputs`].
    pub outputs: Vec<String>,
}

impl MessageTexts {
    /// The texts of a message read in its wire format.
    pub fn of(view: &Message) -> MessageTexts {
        let mut prose = Vec::new();
        let mut outputs = Vec::new();
        for b in &view.blocks {
            match b {
                Block::ToolResult { text, .. } => outputs.push(text.clone()),
                Block::Text(t) | Block::Thinking { text: t, .. } if !t.is_empty() => {
                    prose.push(t.as_str())
                }
                Block::ToolCall { arguments, .. } => prose.push(arguments.as_str()),
                _ => {}
            }
        }
        MessageTexts {
            text: view.plain_text(),
            prose: prose.join("\n"),
            outputs,
        }
    }
}

impl NewMessage<'_> {
    /// Its texts, read again from its JSON (which was read once already when it arrived).
    pub fn texts(&self) -> crate::error::Result<MessageTexts> {
        let value = crate::format::parse_message(self.json, 0)?;
        let view = self.format.adapter().view(&value, 0)?;
        Ok(MessageTexts::of(&view))
    }
}

/// A stored message as an in-memory store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Its facts.
    pub info: MsgInfo,
    /// Its wire JSON.
    pub json: String,
}

/// The full text of a compressed part.
#[derive(Debug, Clone, PartialEq)]
pub struct Blob {
    /// Content-derived id.
    pub id: String,
    /// The full text.
    pub text: String,
    /// Tool name when known.
    pub tool_name: Option<String>,
}

/// How a new message is read: the thresholds and names that decide compression.
pub struct Reading<'a> {
    /// Compress tool results above this many tokens.
    pub compress_over_tokens: u32,
    /// Compress assistant text blocks above this many tokens (a runaway answer).
    pub compress_text_over_tokens: u32,
    /// Tools never compressed.
    pub protected_tools: &'a [String],
}

impl MsgInfo {
    /// Reads a newly seen message: estimates it, decides compression of its tool results, and
    /// returns the facts with the blobs to store. `tool_name_of` resolves a call id to the name
    /// of the tool called.
    pub fn read(
        fp: Fp,
        msg: &Message,
        prev_turn: u32,
        reading: &Reading,
        tool_name_of: &dyn Fn(&str) -> Option<String>,
    ) -> (MsgInfo, Vec<(Blob, Compressed)>) {
        let tokens = estimate_message(msg);
        let mut sent_tokens = tokens;
        let mut compressed = Vec::new();
        let mut blobs = Vec::new();
        let mut protected = false;
        let is_protected = |name: &str| reading.protected_tools.iter().any(|p| p == name);
        let mut texts = 0;
        for b in &msg.blocks {
            let (part, text, name, over) = match b {
                Block::ToolCall { name, .. } => {
                    protected |= is_protected(name);
                    continue;
                }
                Block::ToolResult {
                    call_id,
                    name,
                    text,
                    ..
                } => {
                    let name = name.clone().or_else(|| tool_name_of(call_id));
                    let guarded = name.as_deref().is_some_and(is_protected);
                    protected |= guarded;
                    if guarded {
                        continue;
                    }
                    let part = Part::ToolResult(call_id.clone());
                    (part, text, name, reading.compress_over_tokens)
                }
                Block::Text(text) if msg.role == Role::Assistant => {
                    texts += 1;
                    let part = Part::Text(texts - 1);
                    (part, text, None, reading.compress_text_over_tokens)
                }
                _ => continue,
            };
            if let Some(c) = compress(text, over) {
                let saved = estimate_text(text).saturating_sub(estimate_text(&c.text));
                sent_tokens = sent_tokens.saturating_sub(saved);
                compressed.push(CompressedPart {
                    part,
                    blob_id: c.blob_id.clone(),
                });
                let blob = Blob {
                    id: c.blob_id.clone(),
                    text: text.clone(),
                    tool_name: name,
                };
                blobs.push((blob, c));
            }
        }
        let real_user = msg.is_real_user_turn();
        let info = MsgInfo {
            fp,
            role: msg.role,
            real_user,
            turn: prev_turn + real_user as u32,
            tokens,
            sent_tokens,
            calls: msg
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
                    _ => None,
                })
                .collect(),
            results: msg.result_ids().map(str::to_string).collect(),
            signed_thinking: msg.has_signed_thinking(),
            compressed: compressed.into_boxed_slice(),
            protected,
            call_keys: msg
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolCall {
                        name, arguments, ..
                    } => Some(call_key(name, arguments)),
                    _ => None,
                })
                .collect(),
            regret: Regret::default(),
        };
        (info, blobs)
    }
}

mod role_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::message::Role;

    pub fn serialize<S: Serializer>(r: &Role, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Role, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "system" => Role::System,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => Role::User,
        })
    }
}
