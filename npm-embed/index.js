// smarter-compact-embed: where the embedder's files are. smarter-compact finds this package at run
// time (its js/embedder-package.js) and loads the wasm and the model from these paths in its
// embedder worker; importing this file runs nothing and loads no model.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** This package's version: smarter-compact uses only the embedder of its own version. */
export const version = JSON.parse(readFileSync(here("./package.json"), "utf8")).version;
/** The embedder's wasm module (tract-onnx + tokenizer, wasm-bindgen `--target web` output). */
export const wasmPath = here("./pkg-embed/smarter_compact_bg.wasm");
/** The module's wasm-bindgen glue, an ES module exporting `initSync` and `Embedder`. */
export const gluePath = here("./pkg-embed/smarter_compact.js");
/** The folder holding the model file and the tokenizer. */
export const modelDir = here("./models");
/** The ONNX model's file name in `modelDir`. */
export const modelFile = "minilm-l6-v2-int8.onnx";
/** The tokenizer's file name in `modelDir` (Hugging Face tokenizer.json). */
export const tokenizerFile = "tokenizer.json";
/** The sentence model the files hold. */
export const model = "sentence-transformers/all-MiniLM-L6-v2";
