//! smarter-compact: smart compaction for long coding-agent sessions without an LLM summary.
//!
//! The crate is the engine behind the npm package. Everything outside the `wasm` module is pure Rust and
//! runs natively under `cargo test`; the `wasm` module is the only place that knows about
//! JavaScript. One request goes through [`engine::Engine::transform`]: the wire messages are read
//! through a [`format`](mod@format) adapter into a canonical view ([`message`]), fingerprinted
//! ([`fingerprint`]), estimated ([`tokens`]), large tool results are compressed ([`compress`]),
//! the sticky cut is re-applied or a new one planned ([`trim`]), and the result is a [`rewrite`]
//! of the caller's own items. What the engine remembers of each message is in [`facts`], the
//! session store in [`store`], memory across sessions and `compact_context` in [`memory`].
#![deny(missing_docs)]

pub mod compress;
pub mod config;
pub mod digest;
pub mod embed;
pub mod engine;
pub mod error;
pub mod facts;
pub mod fingerprint;
pub mod format;
pub mod memory;
pub mod message;
pub mod rewrite;
pub mod store;
pub mod tokens;
pub mod trim;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use engine::{Engine, TransformOptions};
pub use error::{Error, Result};

/// Version of this engine: the writer version of every row it stores.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
