//! The MiniLM encoder run by tract-onnx, with its WordPiece tokenizer in-process (feature
//! `embed`).

use std::sync::Arc;

use prost::Message;
use tokenizers::{Tokenizer, TruncationParams};
use tract_onnx::prelude::*;

use super::pool::{mean_pool, plan_batches};
use super::DIM;
use crate::error::{Error, Result};

/// Tokens the model sees per text, `[CLS]` and `[SEP]` included; the rest is cut.
pub const MAX_TOKENS: usize = 256;
/// Texts longer than this many bytes are tokenized from a prefix first (see [`Embedder::ids`]).
const PREFIX_BYTES: usize = 16 * 1024;

/// A loaded model + tokenizer, ready to embed.
pub struct Embedder {
    model: Arc<TypedRunnableModel>,
    tokenizer: Tokenizer,
}

fn embed_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Embed(format!("{what}: {e}"))
}

impl Embedder {
    /// Parses and optimises the ONNX model (int64 `input_ids` + `attention_mask` `[batch, seq]`
    /// → `last_hidden_state` `[batch, seq, 384]`) and the `tokenizer.json`. Truncation is forced
    /// to [`MAX_TOKENS`] and padding off, whatever the json says. Takes ~0.4 s natively and
    /// ~1–1.5 s in wasm for the 90 MB f32 model. Pass the model as an owned `Vec<u8>` to lower
    /// the peak memory by one model size (its bytes are dropped once decoded); `&[u8]` works too.
    pub fn load(model_onnx: impl Into<Vec<u8>>, tokenizer_json: &[u8]) -> Result<Embedder> {
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer_json).map_err(|e| embed_err("tokenizer.json", e))?;
        let truncation = TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        };
        tokenizer
            .with_truncation(Some(truncation))
            .map_err(|e| embed_err("tokenizer.json", e))?;
        tokenizer.with_padding(None);
        // Decode the protobuf straight from the bytes and drop them before tract builds its
        // tensors: the peak is two model sizes instead of four (tract's `model_for_read` copies
        // the input once more), and a wasm heap never shrinks back.
        let bytes: Vec<u8> = model_onnx.into();
        let proto = tract_onnx::pb::ModelProto::decode(bytes.as_slice())
            .map_err(|e| embed_err("model", e))?;
        drop(bytes);
        // The model's own symbolic input facts (`batch`, `seq`) are kept: no override.
        let model = tract_onnx::onnx().model_for_proto_model(&proto);
        drop(proto);
        let model = model
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())
            .map_err(|e| embed_err("model", format!("{e:#}")))?;
        let embedder = Embedder { model, tokenizer };
        embedder.check_output()?;
        Ok(embedder)
    }

    /// Embeds `texts`: one unit-length [`DIM`]-float vector per text, in order. An empty text
    /// embeds like sentence-transformers' empty string (`[CLS] [SEP]`); texts of similar length
    /// run in one padded batch (see `pool::plan_batches`), long ones alone.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let ids: Vec<Vec<i64>> = texts.iter().map(|t| self.ids(t)).collect::<Result<_>>()?;
        let lens: Vec<usize> = ids.iter().map(Vec::len).collect();
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in plan_batches(&lens) {
            let rows: Vec<&[i64]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            for (i, v) in batch.iter().zip(self.run(&rows)?) {
                out[*i] = v;
            }
        }
        Ok(out)
    }

    /// Token ids of one text, truncated to [`MAX_TOKENS`]. A text longer than [`PREFIX_BYTES`]
    /// is first tokenized from a prefix cut at an ASCII whitespace: BERT's pre-tokenizer splits
    /// words there and its normaliser is per character, so when that prefix already
    /// fills [`MAX_TOKENS`] the ids equal the full text's — without scanning megabytes of tool
    /// output. Otherwise (a prefix of mostly spaces) the whole text is tokenized.
    fn ids(&self, text: &str) -> Result<Vec<i64>> {
        if text.len() > PREFIX_BYTES {
            let mut end = PREFIX_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if let Some(cut) = text[..end].rfind(|c: char| c.is_ascii_whitespace()) {
                let ids = self.encode(&text[..cut])?;
                if ids.len() == MAX_TOKENS {
                    return Ok(ids);
                }
            }
        }
        self.encode(text)
    }

    fn encode(&self, text: &str) -> Result<Vec<i64>> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| embed_err("tokenize", e))?;
        Ok(enc.get_ids().iter().map(|&id| i64::from(id)).collect())
    }

    /// Runs one right-padded batch and pools each row over its own tokens.
    fn run(&self, rows: &[&[i64]]) -> Result<Vec<Vec<f32>>> {
        let seq = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0i64; rows.len() * seq];
        let mut mask = vec![0i64; rows.len() * seq];
        for (b, row) in rows.iter().enumerate() {
            ids[b * seq..b * seq + row.len()].copy_from_slice(row);
            mask[b * seq..b * seq + row.len()].fill(1);
        }
        let shape = [rows.len(), seq];
        let tensor = |v: &[i64]| Tensor::from_shape(&shape, v).map_err(|e| embed_err("inputs", e));
        let outputs = self
            .model
            .run(tvec!(tensor(&ids)?.into(), tensor(&mask)?.into()))
            .map_err(|e| embed_err("inference", format!("{e:#}")))?;
        let hidden = outputs
            .first()
            .ok_or_else(|| embed_err("inference", "the model has no output"))?;
        if hidden.shape() != [rows.len(), seq, DIM] {
            return Err(embed_err(
                "inference",
                format!(
                    "output shape {:?}, expected [{}, {seq}, {DIM}]",
                    hidden.shape(),
                    rows.len()
                ),
            ));
        }
        let view = hidden
            .to_plain_array_view::<f32>()
            .map_err(|e| embed_err("inference", e))?;
        let flat = view
            .as_slice()
            .ok_or_else(|| embed_err("inference", "output is not contiguous"))?;
        Ok(flat
            .chunks_exact(seq * DIM)
            .zip(rows)
            .map(|(h, row)| mean_pool(h, row.len()))
            .collect())
    }

    /// Fails at load time, not at the first request, when the model is not a [`DIM`]-wide
    /// sentence encoder.
    fn check_output(&self) -> Result<()> {
        let ids = self.encode("")?;
        self.run(&[&ids]).map(drop)
    }
}
