// The embedder's worker thread: loads the embedder wasm build (pkg-embed, tract + tokenizer) and
// the model, then answers `{ id, texts }` with `{ id, vectors }` (a Float32Array of n × dim,
// its buffer transferred) or `{ id, error: { code, message }, trap }`. The host's event loop never
// runs the model. Started by js/embedder.js with `workerData: { modelPath, tokenizerPath,
// wasmPath, glueUrl }` (the wasm and its glue from the smarter-compact-embed package).
import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

const glueUrl = new URL(workerData.glueUrl);
const wasmUrl = workerData.wasmPath;

const plain = (e) => ({
  code: typeof e?.code === "string" && e.code.startsWith("E_") ? e.code : "E_EMBED",
  message: e instanceof Error ? e.message : String(e),
});

let embedder;
try {
  const glue = await import(glueUrl.href);
  glue.initSync({ module: new WebAssembly.Module(readFileSync(wasmUrl)) });
  const started = performance.now();
  // The byte arrays are copied into wasm memory and dropped here, not kept alive.
  embedder = new glue.Embedder(
    readFileSync(workerData.modelPath),
    readFileSync(workerData.tokenizerPath),
  );
  parentPort.postMessage({ type: "ready", dim: embedder.dim, loadMs: performance.now() - started });
} catch (e) {
  parentPort.postMessage({ type: "failed", error: plain(e) });
}

if (embedder) {
  parentPort.on("message", ({ id, texts }) => {
    try {
      const vectors = embedder.embed(texts);
      parentPort.postMessage({ id, vectors }, [vectors.buffer]);
    } catch (e) {
      // After a trap the instance is unusable: the host ends this thread and starts a fresh one.
      parentPort.postMessage({ id, error: plain(e), trap: e instanceof WebAssembly.RuntimeError });
    }
  });
}
