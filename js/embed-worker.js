// The embedder's worker thread: loads the embedder wasm build (pkg-embed, tract + tokenizer) and
// the model, then answers `{ id, texts }` with `{ id, vectors }` (a Float32Array of n × dim,
// its buffer transferred) or `{ id, error: { code, message }, trap }`, each with `wasmBytes` (its
// wasm linear memory) and this thread's V8 heap, `heapBytes` and `externalBytes` (Node 20's Worker
// has no getHeapStatistics()). The host's event loop never runs the model. Started by
// js/embedder.js with `workerData: { modelPath, tokenizerPath, wasmPath, glueUrl }` (the wasm and
// its glue from the smarter-compact-embed package).
//
// Memory: the wasm module's bytes and the model's are read one after the other into one buffer
// (both are copied out of it: the module by the compiler, the model into wasm memory), freed as
// soon as the model is loaded, so the ~17 MB module and the ~25 MB model are neither both held in
// JS while the model loads nor left for the garbage collector. The wasm memory's high-water mark
// (the model's decoded and optimised tensors) stays for the thread's life: wasm memory never shrinks.
//
// The thread runs at the lowest CPU priority (nice 19) where the OS can set it per thread: on
// Linux `setpriority` takes a thread id (read from /proc/thread-self), so the host's own threads
// keep theirs. Elsewhere it runs at the host's priority.
import {
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  readlinkSync,
  statSync,
} from "node:fs";
import { getPriority, setPriority } from "node:os";
import { getHeapStatistics } from "node:v8";
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

/**
 * One buffer that files are read into one after another: `read(path)` gives the file's bytes,
 * valid until the next `read` or `free`. `free()` gives the memory back at once where the engine
 * has resizable ArrayBuffers (Node 20 has), else to the garbage collector.
 */
function scratchBuffer(maxBytes) {
  let buffer = new ArrayBuffer(0, { maxByteLength: maxBytes });
  const fits = (size) => buffer.resizable && size <= buffer.maxByteLength;
  return {
    read(path) {
      const fd = openSync(path, "r");
      try {
        const size = fstatSync(fd).size;
        if (fits(size)) buffer.resize(size);
        else if (buffer.byteLength < size) buffer = new ArrayBuffer(size);
        const view = new Uint8Array(buffer, 0, size);
        let at = 0;
        while (at < size) {
          const n = readSync(fd, view, at, size - at, at);
          if (n === 0) break;
          at += n;
        }
        return view.subarray(0, at);
      } finally {
        closeSync(fd);
      }
    },
    free() {
      if (buffer.resizable) buffer.resize(0);
      buffer = new ArrayBuffer(0);
    },
  };
}

const glueUrl = new URL(workerData.glueUrl);
const wasmUrl = workerData.wasmPath;

const plain = (e) => ({
  code: typeof e?.code === "string" && e.code.startsWith("E_") ? e.code : "E_EMBED",
  message: e instanceof Error ? e.message : String(e),
});

let embedder;
let memory = null;
let loadMs = 0;
const wasmBytes = () => memory?.buffer.byteLength ?? 0;
/** This thread's V8 heap: `heapBytes` its JS objects, `externalBytes` the memory outside the heap
 * that they own (the wasm memory, the compiled module's bytes and any ArrayBuffer). */
const heap = () => {
  const h = getHeapStatistics();
  return { heapBytes: h.total_heap_size, externalBytes: h.external_memory };
};
try {
  const priority = lowerPriority();
  const glue = await import(glueUrl.href);
  const scratch = scratchBuffer(
    Math.max(statSync(wasmUrl).size, statSync(workerData.modelPath).size),
  );
  try {
    memory = glue.initSync({ module: new WebAssembly.Module(scratch.read(wasmUrl)) }).memory;
    const started = performance.now();
    // The model's bytes are copied into wasm memory, then their buffer is freed.
    embedder = new glue.Embedder(
      scratch.read(workerData.modelPath),
      readFileSync(workerData.tokenizerPath),
    );
    loadMs = performance.now() - started;
  } finally {
    scratch.free();
  }
  parentPort.postMessage({
    type: "ready",
    dim: embedder.dim,
    loadMs,
    wasmBytes: wasmBytes(),
    ...heap(),
    ...priority,
  });
} catch (e) {
  parentPort.postMessage({ type: "failed", error: plain(e) });
}

if (embedder) {
  parentPort.on("message", ({ id, texts }) => {
    try {
      const vectors = embedder.embed(texts);
      parentPort.postMessage({ id, vectors, wasmBytes: wasmBytes(), ...heap() }, [vectors.buffer]);
    } catch (e) {
      // After a trap the instance is unusable: the host ends this thread and starts a fresh one.
      parentPort.postMessage({
        id,
        error: plain(e),
        trap: e instanceof WebAssembly.RuntimeError,
        wasmBytes: wasmBytes(),
        ...heap(),
      });
    }
  });
}
