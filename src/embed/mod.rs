//! Sentence embeddings: sentence-transformers/all-MiniLM-L6-v2 run by tract-onnx, with its
//! WordPiece tokenizer in-process. Texts are truncated to [`MAX_TOKENS`] tokens, the encoder's
//! `last_hidden_state` is mean-pooled over the real tokens and scaled to unit length, exactly as
//! sentence-transformers does (cos ≥ 0.9999 against its vectors).
//!
//! The model and tokenizer come as bytes (the shipped `models/out/minilm-l6-v2-int8.onnx` or
//! another variant, and `models/out/tokenizer.json`, built by `models/build_model.py` and
//! `models/variants.py`), so the same code runs
//! natively and in the separate embedder wasm build (cargo feature `embed`). The pure vector
//! helpers (pooling, cosine, the batch plan) build without the feature, so their unit tests run
//! in every native `cargo test`.

#[cfg(feature = "embed")]
mod model;
mod pool;

/// Dimension of every vector: the store's vector size.
pub use crate::store::vectors::DIM;
#[cfg(feature = "embed")]
pub use model::{Embedder, MAX_TOKENS};
pub use pool::cosine;
