//! The sentence embedder as seen from JavaScript (embedder wasm build only, feature `embed`).
//! It runs in a worker thread (`js/embed-worker.js`), never on the host's event loop.

use wasm_bindgen::prelude::*;

use super::convert::error;
use crate::embed::{Embedder as CoreEmbedder, DIM};

/// A loaded MiniLM model + tokenizer.
#[wasm_bindgen]
pub struct Embedder {
    inner: CoreEmbedder,
}

#[wasm_bindgen]
impl Embedder {
    /// Loads the ONNX model bytes and the `tokenizer.json` bytes; throws E_EMBED when either is
    /// unusable. The model arrives as an owned copy so it can be freed as soon as it is decoded.
    #[wasm_bindgen(constructor)]
    pub fn new(model: Vec<u8>, tokenizer: &[u8]) -> Result<Embedder, JsValue> {
        let inner = CoreEmbedder::load(model, tokenizer).map_err(error)?;
        Ok(Embedder { inner })
    }

    /// Embeds the texts; returns the unit vectors concatenated, `n × dim` floats.
    pub fn embed(&mut self, texts: Vec<String>) -> Result<Vec<f32>, JsValue> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = self.inner.embed(&refs).map_err(error)?;
        Ok(vectors.concat())
    }

    /// Floats per vector (384).
    #[wasm_bindgen(getter)]
    pub fn dim(&self) -> usize {
        DIM
    }
}
