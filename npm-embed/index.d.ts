/** This package's version: smarter-compact uses only the embedder of its own version. */
export const version: string;
/** The embedder's wasm module (tract-onnx + tokenizer, wasm-bindgen `--target web` output). */
export const wasmPath: string;
/** The module's wasm-bindgen glue, an ES module exporting `initSync` and `Embedder`. */
export const gluePath: string;
/** The folder holding the model file and the tokenizer. */
export const modelDir: string;
/** The ONNX model's file name in `modelDir`. */
export const modelFile: string;
/** The tokenizer's file name in `modelDir` (Hugging Face tokenizer.json). */
export const tokenizerFile: string;
/** The sentence model the files hold. */
export const model: string;
