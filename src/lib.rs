//! smarter-compact: smart compaction for long coding-agent sessions without an LLM summary.
//!
//! The crate is the engine behind the npm package. Everything outside [`wasm`] is pure Rust and
//! runs natively under `cargo test`; the `wasm` module is the only place that knows about
//! JavaScript. One request goes through [`engine::Engine::transform`]: the wire messages are read
//! through a [`format`] adapter into a canonical view ([`message`]), fingerprinted
//! ([`fingerprint`]), estimated ([`tokens`]), large tool results are compressed ([`compress`]),
//! the sticky cut is re-applied or a new one planned ([`trim`]), and the result is an edit plan
//! over the caller's own message objects.
#![deny(missing_docs)]

pub mod bank;
pub mod compress;
pub mod config;
#[cfg(feature = "embed")]
pub mod embed;
pub mod engine;
pub mod error;
pub mod fingerprint;
pub mod format;
pub mod history;
pub mod message;
pub mod plan;
pub mod recall;
pub mod score;
pub mod store;
pub mod tokens;
pub mod trim;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use engine::{Engine, TransformOptions};
pub use error::{Error, Result};

/// Version of this engine: the writer version of every row it stores.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
