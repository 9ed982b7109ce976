// The sentence embedder: all-MiniLM-L6-v2 (384 floats per text, unit length) computed by the
// embedder wasm build (pkg-embed: tract-onnx + the WordPiece tokenizer) in a worker thread
// (js/embed-worker.js), so the host's event loop never runs the model. Requests queue and go
// to the worker in chunks; inside a chunk the wasm batches texts of similar length.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { codedError } from "./errors.js";

/** Floats per vector. */
export const DIM = 384;
const MODEL = "sentence-transformers/all-MiniLM-L6-v2";
const MODEL_FILE = "minilm-l6-v2-int8.onnx";
const TOKENIZER_FILE = "tokenizer.json";
/** Texts per worker call: enough for the wasm to batch short texts, few enough that requests interleave. */
const CHUNK = 32;
const HOW_TO_BUILD =
  "Build it from a checkout with `make build-embed` (writes models/out/ and copies the model into " +
  "npm/models/), or pass { modelDir } / set SMARTER_COMPACT_MODEL_DIR to a folder holding both files " +
  "(see models/README.md).";

/** The model folder: the option, else SMARTER_COMPACT_MODEL_DIR, else the package's models/. */
function modelDirOf(option) {
  const dir =
    option ?? process.env.SMARTER_COMPACT_MODEL_DIR ?? new URL("../models/", import.meta.url);
  return dir instanceof URL ? fileURLToPath(dir) : String(dir);
}

/**
 * Starts the embedder in a worker thread and waits until the model is loaded (~1–2 s).
 * Rejects with code E_NO_MODEL when the model files or the embedder module are missing,
 * E_EMBED when they cannot be loaded.
 * @param {{ modelDir?: string | URL }} [options]
 * @returns {Promise<{ embed(texts: string[]): Promise<Float32Array[]>, close(): Promise<void>,
 *   info: { dim: number, model: string, modelDir: string, loadMs: number } }>}
 */
export async function createEmbedder({ modelDir } = {}) {
  const dir = modelDirOf(modelDir);
  const files = { modelPath: join(dir, MODEL_FILE), tokenizerPath: join(dir, TOKENIZER_FILE) };
  const missing = Object.values(files).filter((p) => !existsSync(p));
  if (missing.length) {
    throw codedError(
      "E_NO_MODEL",
      `no embedding model: ${missing.join(" and ")} not found. ${HOW_TO_BUILD}`,
    );
  }
  const wasm = new URL("../pkg-embed/smarter_compact_bg.wasm", import.meta.url);
  if (!existsSync(wasm)) {
    throw codedError(
      "E_NO_MODEL",
      `the embedder module ${fileURLToPath(wasm)} is not built (run make build-embed in a checkout).`,
    );
  }

  const queue = []; // requests: { texts, sent, received, vectors, resolve, reject }
  let worker = null; // { thread, ready: Promise<{ dim, loadMs }> }
  let inFlight = null; // { id, parts: [{ req, count }] }
  let closed = false;
  let ids = 0;

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
        if (msg.type === "ready") resolve(msg);
        else if (msg.type === "failed") reject(codedError(msg.error.code, msg.error.message));
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

  // Sends the next chunk (FIFO across requests) when the worker is idle.
  function pump() {
    if (closed || inFlight) return;
    if (!queue.length) {
      worker?.thread.unref(); // idle: do not keep the host process alive
      return;
    }
    const w = worker ?? start(); // a fresh thread after a trap or crash
    const parts = [];
    const texts = [];
    for (const req of queue) {
      const count = Math.min(req.texts.length - req.sent, CHUNK - texts.length);
      if (count <= 0) continue;
      parts.push({ req, count });
      texts.push(...req.texts.slice(req.sent, req.sent + count));
      req.sent += count;
      if (texts.length === CHUNK) break;
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
    /** One unit 384-float vector per text, in order. */
    embed(texts) {
      if (closed) return Promise.reject(codedError("E_EMBED", "the embedder is closed"));
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) {
        return Promise.reject(codedError("E_ARG", "embed() takes an array of strings"));
      }
      if (!texts.length) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        queue.push({
          texts,
          sent: 0,
          received: 0,
          vectors: new Array(texts.length),
          resolve,
          reject,
        });
        pump();
      });
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
