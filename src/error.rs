//! Typed errors. Each variant has a stable `code` that crosses to JavaScript unchanged.

/// Everything that can go wrong inside the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request body is not a JSON array of message objects.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// A message does not have the shape its wire format requires.
    #[error("malformed message {index}: {reason}")]
    Malformed {
        /// Position of the message in the request.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A tool result answers a call that no earlier message made.
    #[error("message {index} carries a tool result for unknown call {call_id:?}")]
    OrphanResult {
        /// Position of the message in the request.
        index: usize,
        /// The call id it answers.
        call_id: String,
    },
    /// The `format` option names no known wire format.
    #[error("unknown format {0:?} (expected \"openai\" or \"anthropic\")")]
    UnknownFormat(String),
    /// A session id or blob id that could escape its directory or is otherwise unusable.
    #[error("invalid id {id:?}: {reason}")]
    InvalidId {
        /// The rejected id (truncated for display).
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A tool or API argument out of range or of the wrong type.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Something asked for does not exist (a blob id, a message).
    #[error("not found: {0}")]
    NotFound(String),
    /// A statement refused by the SQL tool's guard (not a single read-only query).
    #[error("SQL refused: {0}")]
    SqlRefused(String),
    /// A read-only query that failed or ran out of time.
    #[error("SQL failed: {0}")]
    Sql(String),
    /// The session store failed (SQLite error, unwritable file, locked database).
    #[error("store: {0}")]
    Store(String),
    /// A write asked of a store opened read-only (a reader never writes a store).
    #[error("read-only store: {0}")]
    ReadOnly(String),
    /// There is no session store to read: no database file, or one without the session schema.
    #[error("no session: {0}")]
    NoSession(String),
    /// The sentence embedder failed: an unreadable model or tokenizer, or a failed inference.
    #[error("embedder: {0}")]
    Embed(String),
}

/// Every code [`Error::code`] returns.
pub const ERROR_CODES: [&str; 13] = [
    "E_JSON",
    "E_MALFORMED",
    "E_ORPHAN_RESULT",
    "E_FORMAT",
    "E_BAD_ID",
    "E_ARG",
    "E_NOT_FOUND",
    "E_SQL_REFUSED",
    "E_SQL",
    "E_STORE",
    "E_READONLY",
    "E_NO_SESSION",
    "E_EMBED",
];

impl Error {
    /// Stable machine-readable code, e.g. `E_MALFORMED`. Never changes between versions.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Json(_) => "E_JSON",
            Error::Malformed { .. } => "E_MALFORMED",
            Error::OrphanResult { .. } => "E_ORPHAN_RESULT",
            Error::UnknownFormat(_) => "E_FORMAT",
            Error::InvalidId { .. } => "E_BAD_ID",
            Error::InvalidArgument(_) => "E_ARG",
            Error::NotFound(_) => "E_NOT_FOUND",
            Error::SqlRefused(_) => "E_SQL_REFUSED",
            Error::Sql(_) => "E_SQL",
            Error::Store(_) => "E_STORE",
            Error::ReadOnly(_) => "E_READONLY",
            Error::NoSession(_) => "E_NO_SESSION",
            Error::Embed(_) => "E_EMBED",
        }
    }

    /// Shorthand for [`Error::Malformed`].
    pub fn malformed(index: usize, reason: impl Into<String>) -> Self {
        Error::Malformed {
            index,
            reason: reason.into(),
        }
    }

    /// A message whose role the wire format does not know (the role is quoted, at most 30 chars).
    pub fn unknown_role(index: usize, role: &str) -> Self {
        Error::malformed(
            index,
            format!(
                "unknown role {:?}",
                role.chars().take(30).collect::<String>()
            ),
        )
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
