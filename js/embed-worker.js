// The embedder's worker thread: loads the embedder wasm build (pkg-embed, tract + tokenizer) and
// the model, then answers `{ id, texts }` with `{ id, vectors }` (a Float32Array of n × dim,
// its buffer transferred) or `{ id, error: { code, message }, trap }`, each with `wasmBytes` (its
// wasm linear memory). The host's event loop never runs the model. Started by js/embedder.js with
// `workerData: { modelPath, tokenizerPath, wasmPath, glueUrl }` (the wasm and its glue from the
// smarter-compact-embed package).
//
// The thread runs at the lowest CPU priority (nice 19) where the OS can set it per thread: on
// Linux `setpriority` takes a thread id (read from /proc/thread-self), so the host's own threads
// keep theirs. Elsewhere it runs at the host's priority.
import { readFileSync, readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";

/** Lowest priority: the OS runs this thread when nothing else wants the CPU. */
const NICE = 19;

/** This thread's OS id and nice value after lowering it, or nulls when the OS cannot tell. */
function lowerPriority() {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return { tid: null, nice: null };
    setPriority(tid, NICE);
    return { tid, nice: getPriority(tid) };
  } catch {
    return { tid: null, nice: null }; // no /proc (macOS, Windows) or not allowed: host priority
  }
}

const glueUrl = new URL(workerData.glueUrl);
const wasmUrl = workerData.wasmPath;

const plain = (e) => ({
  code: typeof e?.code === "string" && e.code.startsWith("E_") ? e.code : "E_EMBED",
  message: e instanceof Error ? e.message : String(e),
});

let embedder;
let memory = null;
const wasmBytes = () => memory?.buffer.byteLength ?? 0;
try {
  const priority = lowerPriority();
  const glue = await import(glueUrl.href);
  memory = glue.initSync({ module: new WebAssembly.Module(readFileSync(wasmUrl)) }).memory;
  const started = performance.now();
  // The byte arrays are copied into wasm memory and dropped here, not kept alive.
  embedder = new glue.Embedder(
    readFileSync(workerData.modelPath),
    readFileSync(workerData.tokenizerPath),
  );
  parentPort.postMessage({
    type: "ready",
    dim: embedder.dim,
    loadMs: performance.now() - started,
    wasmBytes: wasmBytes(),
    ...priority,
  });
} catch (e) {
  parentPort.postMessage({ type: "failed", error: plain(e) });
}

if (embedder) {
  parentPort.on("message", ({ id, texts }) => {
    try {
      const vectors = embedder.embed(texts);
      parentPort.postMessage({ id, vectors, wasmBytes: wasmBytes() }, [vectors.buffer]);
    } catch (e) {
      // After a trap the instance is unusable: the host ends this thread and starts a fresh one.
      parentPort.postMessage({
        id,
        error: plain(e),
        trap: e instanceof WebAssembly.RuntimeError,
        wasmBytes: wasmBytes(),
      });
    }
  });
}
