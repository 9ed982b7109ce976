//! The real model's files for the native embedder bench: `models/out/` (from
//! `make model`) or the folder in SMARTER_COMPACT_MODEL_DIR; the ONNX file is the shipped
//! `minilm-l6-v2-int8.onnx` or the name in SMARTER_COMPACT_MODEL_FILE (another variant).

use std::path::PathBuf;

/// A path inside the repository.
pub fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The folder holding the ONNX file and `tokenizer.json`.
pub fn model_dir() -> PathBuf {
    std::env::var_os("SMARTER_COMPACT_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo("models/out"))
}

/// The ONNX file's name in [`model_dir`]: the shipped int8 one unless SMARTER_COMPACT_MODEL_FILE
/// names another variant (models/README.md).
pub fn model_file() -> String {
    std::env::var("SMARTER_COMPACT_MODEL_FILE").unwrap_or_else(|_| "minilm-l6-v2-int8.onnx".into())
}

/// The bytes of a file; a missing model file panics with how to build it.
pub fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}. Build the model: `make model` (variants: `make model-variants`)",
            path.display()
        )
    })
}

/// The ONNX model and the tokenizer.json.
pub fn model_bytes() -> (Vec<u8>, Vec<u8>) {
    let dir = model_dir();
    (
        read(dir.join(model_file())),
        read(dir.join("tokenizer.json")),
    )
}
