//! The sentence embedder on the real model (`models/out/`, built by `models/build_model.py`;
//! another folder via SMARTER_COMPACT_MODEL_DIR) against the sentence-transformers reference
//! vectors. Run: `cargo test --features embed --test embed`. Missing model files fail the tests.
//! Native speed is a bench: `cargo bench --features embed --bench embed_native`.
#![cfg(feature = "embed")]

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use serde_json::Value;
use smarter_compact::embed::{cosine, Embedder, DIM};

#[path = "support/model_files.rs"]
mod model_files;
use model_files::{model_bytes, read, repo};

/// One embedder shared by the tests (loading costs ~0.4 s and ~280 MB).
fn embedder() -> MutexGuard<'static, Embedder> {
    static E: OnceLock<Mutex<Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        let (model, tokenizer) = model_bytes();
        let t = Instant::now();
        let e = Embedder::load(model, &tokenizer).expect("load the model");
        eprintln!("model load {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
        Mutex::new(e)
    })
    .lock()
    .unwrap_or_else(|p| p.into_inner())
}

fn reference() -> (Vec<String>, Vec<Vec<f32>>) {
    let path = repo("tests/data/embeddings/minilm_reference.json");
    let v: Value = serde_json::from_slice(&read(path)).expect("reference json");
    let texts = v["texts"].as_array().expect("texts");
    let vectors = v["vectors"].as_array().expect("vectors");
    let texts = texts
        .iter()
        .map(|t| t.as_str().expect("text").to_string())
        .collect();
    let vectors = vectors
        .iter()
        .map(|r| {
            r.as_array()
                .expect("vector")
                .iter()
                .map(|x| x.as_f64().expect("float") as f32)
                .collect()
        })
        .collect();
    (texts, vectors)
}

fn is_unit(v: &[f32]) -> bool {
    v.len() == DIM && (v.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() < 1e-4
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn every_reference_text_matches_sentence_transformers() {
    let (texts, want) = reference();
    assert_eq!(texts.len(), 40);
    let mut e = embedder();
    let mut cos = Vec::new();
    for (i, (text, want)) in texts.iter().zip(&want).enumerate() {
        let got = e.embed(&[text]).expect("embed");
        assert_eq!(got.len(), 1);
        assert!(is_unit(&got[0]), "text {i}: not a unit {DIM}-vector");
        let c = cosine(&got[0], want);
        assert!(
            c >= 0.999,
            "text {i} ({} chars): cos {c}",
            text.chars().count()
        );
        cos.push(c);
    }
    let min = cos.iter().copied().fold(f32::INFINITY, f32::min);
    let mean = cos.iter().sum::<f32>() / cos.len() as f32;
    eprintln!(
        "native: 40 reference texts, cos min {min:.7} (1 - min {:.1e}) mean {mean:.7}",
        1.0 - min
    );
}

#[test]
fn batched_and_single_give_the_same_vectors() {
    let (texts, _) = reference();
    // Every reference text plus many short ones, so the planner really batches (padded rows).
    let mut all: Vec<&str> = texts.iter().map(String::as_str).collect();
    let short = [
        "ok",
        "cargo test",
        "fn main() {}",
        "error[E0308]: mismatched types",
        "ls -la src/",
    ];
    all.extend(short.iter().cycle().take(20));
    let mut e = embedder();
    let batched = e.embed(&all).expect("batch");
    assert_eq!(batched.len(), all.len());
    let mut worst = 0f32;
    for (text, b) in all.iter().zip(&batched) {
        let single = e.embed(&[text]).expect("single");
        worst = worst.max(max_diff(&single[0], b));
    }
    eprintln!("batch vs single: max abs diff {worst:.1e}");
    assert!(
        worst < 1e-5,
        "batched vectors differ from single ones by {worst}"
    );
    assert!(e.embed(&[]).expect("no texts").is_empty());
}

#[test]
fn empty_and_very_long_texts() {
    let mut e = embedder();
    let empty = e.embed(&[""]).expect("empty");
    assert!(is_unit(&empty[0]));

    // 1 MB of words: the 16 KiB prefix shortcut must give the full tokenization's vector.
    let long = "the build failed because the linker ran out of memory; ".repeat(18_000);
    let got = e.embed(&[&long, &long[..5_000]]).expect("long");
    assert!(is_unit(&got[0]));
    assert!(
        max_diff(&got[0], &got[1]) < 1e-6,
        "prefix shortcut changed the vector"
    );

    // Mostly whitespace: no shortcut; leading spaces do not change BERT's tokens.
    let spaced = format!("{}hello world", " ".repeat(100_000));
    let got = e.embed(&[&spaced, "hello world"]).expect("spaced");
    assert!(max_diff(&got[0], &got[1]) < 1e-6);

    // One huge word of multi-byte characters (no whitespace to cut at): [UNK], still a vector.
    let word = "é".repeat(20_000);
    assert!(is_unit(&e.embed(&[&word]).expect("huge word")[0]));
}

#[test]
fn unusable_inputs_fail_with_e_embed() {
    let (_, tokenizer) = model_bytes();
    let Err(err) = Embedder::load(b"not an onnx file", &tokenizer) else {
        panic!("garbage model loaded")
    };
    assert_eq!(err.code(), "E_EMBED");
    let Err(err) = Embedder::load(b"", b"{ not json") else {
        panic!("garbage tokenizer loaded")
    };
    assert_eq!(err.code(), "E_EMBED");
    eprintln!("errors: {err}");
}
