//! Native embedder throughput on one thread: ms per text at 16/128/256 tokens, batch 1 and 8,
//! median of 5 runs after a warm-up, wall and CPU time, release build; then the cosine of the
//! 40 reference texts against sentence-transformers' vectors. Run:
//! `cargo bench --features embed --bench embed_native` (model from `make model`, or
//! SMARTER_COMPACT_MODEL_DIR; another variant's file: SMARTER_COMPACT_MODEL_FILE). `make
//! bench-embed` runs it for every variant and puts its figures in bench/EMBED.md.

use std::time::Instant;

use serde_json::Value;
use smarter_compact::embed::Embedder;

#[path = "model_files.rs"]
mod model_files;
use model_files::{model_bytes, model_dir, model_file, read, repo};

/// `n` texts of exactly `tokens` tokens ([CLS] and [SEP] included): runs of whole lowercase
/// words of real session prose that are single WordPiece tokens.
fn texts_of(tokens: usize, n: usize) -> Vec<String> {
    let tok: Value =
        serde_json::from_slice(&read(model_dir().join("tokenizer.json"))).expect("json");
    let vocab = tok["model"]["vocab"].as_object().expect("vocab");
    let session: Value = serde_json::from_slice(&read(repo(
        "tests/data/sessions/swe-traj/django__django-11087.json",
    )))
    .expect("session");
    let words: Vec<String> = session["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .flat_map(|c| c.split(|ch: char| !ch.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase)
        .filter(|w| vocab.contains_key(w))
        .collect();
    let k = tokens - 2;
    (0..n)
        .map(|i| words[i * k..(i + 1) * k].join(" "))
        .collect()
}

/// On-CPU time of this thread in ms (Linux; 0 elsewhere): less disturbed than wall time on a
/// busy machine.
fn cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e6
}

/// Peak resident set of this process in MB (Linux `VmHWM`; 0 elsewhere).
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .unwrap_or(0.0)
        / 1024.0
}

/// Cosine of each of the 40 reference texts, embedded in one call, against the
/// sentence-transformers vector in tests/data/embeddings/minilm_reference.json.
fn reference_cosines(e: &mut Embedder) -> Vec<f64> {
    let reference: Value =
        serde_json::from_slice(&read(repo("tests/data/embeddings/minilm_reference.json")))
            .expect("reference json");
    let texts: Vec<&str> = reference["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|t| t.as_str().expect("text"))
        .collect();
    let got = e.embed(&texts).expect("embed the reference texts");
    let want = reference["vectors"].as_array().expect("vectors");
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let g: Vec<f64> = g.iter().map(|&x| f64::from(x)).collect();
            let w: Vec<f64> = w
                .as_array()
                .expect("vector")
                .iter()
                .map(|x| x.as_f64().expect("float"))
                .collect();
            dot(&g, &w) / (dot(&g, &g) * dot(&w, &w)).sqrt()
        })
        .collect()
}

/// Native throughput on one thread, ms per text at 16/128/256 tokens, batch 1 and 8 (median
/// of 5 runs after a warm-up, wall and CPU time), the model's load time, the reference cosines
/// and the peak RSS.
fn main() {
    let (model, tokenizer) = model_bytes();
    let t = Instant::now();
    let mut e = Embedder::load(model, &tokenizer).expect("load the model");
    eprintln!(
        "native: {}, model load {:.0} ms",
        model_file(),
        t.elapsed().as_secs_f64() * 1e3
    );
    for tokens in [16, 128, 256] {
        let texts = texts_of(tokens, 8);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for batch in [1, 8] {
            let (mut wall, mut cpu) = (Vec::new(), Vec::new());
            for _ in 0..6 {
                let (t, c) = (Instant::now(), cpu_ms());
                for chunk in refs.chunks(batch) {
                    e.embed(chunk).expect("embed");
                }
                wall.push(t.elapsed().as_secs_f64() * 1e3 / refs.len() as f64);
                cpu.push((cpu_ms() - c) / refs.len() as f64);
            }
            let median = |mut v: Vec<f64>| {
                v.remove(0);
                v.sort_by(f64::total_cmp);
                v[2]
            };
            eprintln!(
                "native {tokens:3} tokens, batch {batch}: {:.1} ms/text wall, {:.1} ms CPU",
                median(wall),
                median(cpu)
            );
        }
    }
    let cos = reference_cosines(&mut e);
    eprintln!(
        "native: {} reference texts, cos min {:.7} mean {:.7}",
        cos.len(),
        cos.iter().copied().fold(f64::INFINITY, f64::min),
        cos.iter().sum::<f64>() / cos.len() as f64
    );
    eprintln!("native: peak RSS {:.0} MB", peak_rss_mb());
}
