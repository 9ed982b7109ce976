// The sentence embedder: all-MiniLM-L6-v2 (384 floats per text, unit length) computed by the
// embedder wasm build (pkg-embed: tract-onnx + the WordPiece tokenizer) in one worker thread
// (js/embed-worker.js, at the lowest CPU priority the OS gives it), so the host's event loop
// never runs the model. Requests queue by priority (a search's query first, then ordinary
// calls, then the background backlog, which waits while the host has a request in flight) and
// go to the worker in chunks; inside a chunk the wasm batches texts of similar length.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { findEmbedderPackage } from "./embedder-package.js";
import { codedError } from "./errors.js";

/** Floats per vector. */
export const DIM = 384;
const MODEL = "sentence-transformers/all-MiniLM-L6-v2";
/** Texts per worker call: enough for the wasm to batch short texts, few enough that requests interleave. */
const CHUNK = 32;
/** Texts per worker call for the background backlog: the worker is back for a query, or stops
 * for a host request, after at most this many texts. */
const BACKGROUND_CHUNK = 8;
/** Priorities of `embed()`, first served first. */
const PRIORITY = { query: 0, normal: 1, background: 2 };
const HOW_TO_BUILD =
  "The embedder package smarter-compact-embed holds both (`smarter-compact enable embeddings`; in a " +
  "checkout `make build-embed` fills npm-embed/), or pass { modelDir } / set SMARTER_COMPACT_MODEL_DIR " +
  "to a folder holding both files (see models/README.md).";

/** The model folder: the option, else SMARTER_COMPACT_MODEL_DIR, else the embedder package's. */
function modelDirOf(option, found) {
  const dir = option ?? process.env.SMARTER_COMPACT_MODEL_DIR ?? found.modelDir;
  return dir instanceof URL ? fileURLToPath(dir) : String(dir);
}

/**
 * Starts the embedder in a worker thread and waits until the model is loaded (~1–2 s).
 * Rejects with code E_NO_MODEL when the embedder package (js/embedder-package.js says where it is
 * looked for) or the model files are missing, E_EMBED when they cannot be loaded.
 * @param {{ modelDir?: string | URL, embedDir?: string }} [options]
 * @returns {Promise<{ embed(texts: string[]): Promise<Float32Array[]>, close(): Promise<void>,
 *   info: { dim: number, model: string, modelDir: string, loadMs: number } }>}
 */
export async function createEmbedder({ modelDir, embedDir } = {}) {
  const found = await findEmbedderPackage({ dir: embedDir });
  if (!found.found) throw codedError("E_NO_MODEL", `no embedder: ${found.why}`);
  const dir = modelDirOf(modelDir, found);
  const files = {
    modelPath: join(dir, found.modelFile),
    tokenizerPath: join(dir, found.tokenizerFile),
  };
  const missing = Object.values(files).filter((p) => !existsSync(p));
  if (missing.length) {
    throw codedError(
      "E_NO_MODEL",
      `no embedding model: ${missing.join(" and ")} not found. ${HOW_TO_BUILD}`,
    );
  }
  files.wasmPath = found.wasmPath;
  files.glueUrl = pathToFileURL(found.gluePath).href;

  const queue = []; // requests: { texts, rank, sent, received, vectors, resolve, reject }
  let worker = null; // { thread, ready: Promise<{ dim, loadMs }> }
  let inFlight = null; // { id, parts: [{ req, count }] }
  let closed = false;
  let ids = 0;
  let hostRequests = 0; // host requests in flight: the background waits while there is one
  let wasmBytes = 0; // the worker's wasm linear memory after its latest call
  let heap = { heapBytes: 0, externalBytes: 0 }; // the worker's V8 heap after its latest call
  let threadInfo = { tid: null, nice: null }; // the live worker's OS thread id and nice value

  function drop(req, error) {
    const i = queue.indexOf(req);
    if (i >= 0) queue.splice(i, 1);
    if (error) req.reject(error);
    else req.resolve(req.vectors);
  }

  function settle(flight, vectors, error) {
    if (inFlight !== flight) return;
    inFlight = null;
    let offset = 0;
    for (const { req, count } of flight.parts) {
      if (error) drop(req, error);
      else {
        for (let i = 0; i < count; i++, offset += DIM) {
          req.vectors[req.received++] = vectors.subarray(offset, offset + DIM);
        }
        if (req.received === req.texts.length) drop(req);
      }
    }
    pump();
  }

  function start() {
    const thread = new Worker(new URL("./embed-worker.js", import.meta.url), { workerData: files });
    const current = { thread };
    current.ready = new Promise((resolve, reject) => {
      thread.on("message", (msg) => {
        if (msg.wasmBytes) wasmBytes = msg.wasmBytes;
        if (msg.heapBytes) heap = { heapBytes: msg.heapBytes, externalBytes: msg.externalBytes };
        if (msg.type === "ready") {
          threadInfo = { tid: msg.tid ?? null, nice: msg.nice ?? null };
          resolve(msg);
        } else if (msg.type === "failed") reject(codedError(msg.error.code, msg.error.message));
        else if (inFlight?.id === msg.id) {
          if (msg.trap) stop(current);
          settle(inFlight, msg.vectors, msg.error && codedError(msg.error.code, msg.error.message));
        }
      });
      const died = (e) => {
        const error = codedError(
          "E_EMBED",
          `embedder worker stopped: ${e?.message ?? `exit code ${e}`}`,
          e,
        );
        reject(error);
        if (worker === current) {
          worker = null;
          if (inFlight) settle(inFlight, null, error);
        }
      };
      thread.on("error", died);
      thread.on("exit", (code) => died(code));
    });
    current.ready.catch(() => stop(current));
    worker = current;
    return current;
  }

  function stop(w) {
    if (worker === w) worker = null;
    w.thread.terminate();
  }

  // The rank served next: the best one waiting, the background only with no host request.
  function nextRank() {
    let best = null;
    for (const req of queue) {
      if (req.sent === req.texts.length) continue;
      if (req.rank === PRIORITY.background && hostRequests > 0) continue;
      if (best === null || req.rank < best) best = req.rank;
    }
    return best;
  }

  // Sends the next chunk (FIFO inside the best waiting rank) when the worker is idle.
  function pump() {
    if (closed || inFlight) return;
    const rank = nextRank();
    if (rank === null) {
      worker?.thread.unref(); // idle: do not keep the host process alive
      return;
    }
    const w = worker ?? start(); // a fresh thread after a trap or crash
    const size = rank === PRIORITY.background ? BACKGROUND_CHUNK : CHUNK;
    const parts = [];
    const texts = [];
    for (const req of queue) {
      if (req.rank !== rank) continue;
      const count = Math.min(req.texts.length - req.sent, size - texts.length);
      if (count <= 0) continue;
      parts.push({ req, count });
      texts.push(...req.texts.slice(req.sent, req.sent + count));
      req.sent += count;
      if (texts.length === size) break;
    }
    const flight = { id: ++ids, parts };
    inFlight = flight;
    w.thread.ref();
    w.ready.then(
      () => w.thread.postMessage({ id: flight.id, texts }),
      (e) => settle(flight, null, e),
    );
  }

  const first = start();
  let loaded;
  try {
    loaded = await first.ready;
  } catch (e) {
    closed = true;
    throw e;
  }
  first.thread.unref();

  return {
    info: { dim: loaded.dim, model: MODEL, modelDir: dir, loadMs: Math.round(loaded.loadMs) },
    /** Whether the worker is computing now: a new call waits for that chunk to finish. */
    get busy() {
      return inFlight !== null;
    },
    /** The worker's memory as of its latest call, in bytes: `wasmBytes` its wasm linear memory
     * (the model and tract's buffers), `heapBytes` its V8 heap, `externalBytes` what the heap's
     * objects own outside it (the wasm memory and module included); and the thread's OS id and
     * nice value when the OS tells them. */
    get worker() {
      return { wasmBytes, ...heap, ...threadInfo };
    },
    /**
     * One unit 384-float vector per text, in order. `priority`: "query" (served before anything
     * else waiting), "normal" (default), or "background" (served last, and only while no host
     * request is in flight: see `beginRequest`).
     */
    embed(texts, { priority = "normal" } = {}) {
      if (closed) return Promise.reject(codedError("E_EMBED", "the embedder is closed"));
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) {
        return Promise.reject(codedError("E_ARG", "embed() takes an array of strings"));
      }
      if (!Object.hasOwn(PRIORITY, priority)) {
        return Promise.reject(
          codedError("E_ARG", 'priority must be "query", "normal" or "background"'),
        );
      }
      if (!texts.length) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        queue.push({
          texts,
          rank: PRIORITY[priority],
          sent: 0,
          received: 0,
          vectors: new Array(texts.length),
          resolve,
          reject,
        });
        pump();
      });
    },
    /**
     * The host has a request in flight: background texts are not sent to the worker until the
     * returned function is called (once; later calls do nothing). A chunk already in the worker
     * finishes.
     */
    beginRequest() {
      hostRequests++;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        hostRequests--;
        pump();
      };
    },
    /** Ends the worker thread; pending requests reject with E_EMBED. */
    async close() {
      if (closed) return;
      closed = true;
      const error = codedError("E_EMBED", "the embedder was closed");
      for (const req of [...queue]) drop(req, error);
      inFlight = null;
      if (worker) await worker.thread.terminate();
      worker = null;
    },
  };
}
