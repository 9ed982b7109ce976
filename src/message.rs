//! The canonical message model: what the engine needs to know about one message, whatever wire
//! format it came in. It is a *view*: the caller's wire object stays the source of truth, and the
//! engine only ever edits it surgically through its [`crate::format::WireFormat`] adapter, so every
//! field it does not understand survives byte for byte.

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// System or developer instructions.
    System,
    /// The human, or a message carrying tool results (Anthropic) or host-synthetic text.
    User,
    /// The model.
    Assistant,
    /// A tool result message (OpenAI `role: "tool"`, Pi `toolResult`).
    Tool,
}

impl Role {
    /// Lower-case name as stored in the session database.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Plain text.
    Text(String),
    /// Model reasoning; `signed` when it carries a provider signature (or is redacted), which
    /// makes it replayable only verbatim.
    Thinking {
        /// The reasoning text (empty when redacted).
        text: String,
        /// Carries a signature or is redacted.
        signed: bool,
    },
    /// A tool call made by the assistant.
    ToolCall {
        /// The call id that its result refers to.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments as JSON text.
        arguments: String,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call it answers.
        call_id: String,
        /// Tool name when the wire format carries it.
        name: Option<String>,
        /// The result as text (text parts joined with newlines).
        text: String,
        /// The tool reported an error.
        is_error: bool,
    },
    /// An image or other binary attachment (counted, never edited).
    Image,
    /// A block the engine does not interpret, as JSON text (counted, kept verbatim).
    Other(String),
}

/// The canonical view of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// Its content, in order.
    pub blocks: Vec<Block>,
    /// The host marked the message as generated rather than typed by a human.
    pub synthetic: bool,
}

/// A call's arguments as the tool got them: the JSON text inside when the Responses API's
/// canonical reading kept them wrapped as `{"arguments": "{…}"}`, else as they are.
pub fn call_arguments(arguments: &str) -> std::borrow::Cow<'_, str> {
    use serde_json::Value;
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(arguments) {
        if let (1, Some(Value::String(inner))) = (o.len(), o.get("arguments")) {
            if serde_json::from_str::<Value>(inner).is_ok() {
                return std::borrow::Cow::Owned(inner.clone());
            }
        }
    }
    std::borrow::Cow::Borrowed(arguments)
}

impl Message {
    /// Ids of the tool calls this message makes.
    pub fn call_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolCall { id, .. } => Some(id.as_str()),
            _ => None,
        })
    }

    /// Ids of the calls this message answers.
    pub fn result_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
    }

    /// A real user turn: a user message carrying human text, not tool results, not synthetic.
    pub fn is_real_user_turn(&self) -> bool {
        self.role == Role::User
            && !self.synthetic
            && self
                .blocks
                .iter()
                .any(|b| matches!(b, Block::Text(t) if !t.trim().is_empty()))
            && !self
                .blocks
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
    }

    /// Carries signed or redacted thinking.
    pub fn has_signed_thinking(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| matches!(b, Block::Thinking { signed: true, .. }))
    }

    /// The searchable text of the message: text, thinking, tool calls and results, one per line.
    pub fn plain_text(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            let piece: &str = match b {
                Block::Text(t) => t,
                Block::Thinking { text, .. } => text,
                Block::ToolCall { arguments, .. } => arguments,
                Block::ToolResult { text, .. } => text,
                Block::Image | Block::Other(_) => continue,
            };
            if piece.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(piece);
        }
        out
    }
}
