// Embeddings and the memory bank on the host side. The embedder runs in a worker thread; here we
// only move texts and vectors between it and the engine, in the background after each request,
// so the host's event loop and the request path never wait for a model.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "./shims/index.js";
import { engineModule } from "./wasm.js";

let shared = null;

/** The process-wide embedder, or null when there is no model (or it cannot start). */
export function sharedEmbedder() {
  shared ??= import("./embedder.js").then((m) => m.createEmbedder()).catch(() => null);
  return shared;
}

/** Opens `<stateDir>/context/banks/<name>.db`: `{ bank, shim }`. */
export async function openBank(stateDir, name) {
  const glue = await engineModule();
  glue.validateId(name);
  const dir = join(stateDir, "context", "banks");
  mkdirSync(dir, { recursive: true });
  const shim = await openSqlite({ path: join(dir, `${name}.db`) });
  return { bank: new glue.MemoryBank(shim), shim };
}

/** Concatenates vectors of one length into one Float32Array (the engine checks the length). */
export function flat(vecs) {
  const dim = vecs[0]?.length ?? 0;
  const out = new Float32Array(vecs.length * dim);
  vecs.forEach((v, i) => out.set(v, i * dim));
  return out;
}

const BATCH = 16;

/**
 * Embeds what the store and the bank are waiting for, a batch at a time, until nothing is left.
 * `target()` returns the live engine and bank (or null when gone); errors stop the round quietly:
 * the next request starts another. `priority`: the embedder's ("background" by default: served
 * after everything else, and not while the host has a request in flight).
 */
export async function embedBacklog(embedder, target, { priority = "background" } = {}) {
  const model = embedder.info?.model ?? "minilm";
  for (;;) {
    const t = target();
    if (!t?.engine) return;
    const chunks = t.engine.pendingVectors(BATCH);
    if (chunks.length) {
      const vecs = await embedder.embed(
        chunks.map((c) => c.text),
        { priority },
      );
      target()?.engine?.putVectors(
        chunks.map((c) => c.hash),
        model,
        flat(vecs),
      );
      continue;
    }
    const memories = t.bank ? t.bank.pending(BATCH) : [];
    if (!memories.length) return;
    const vecs = await embedder.embed(
      memories.map(([, text]) => text),
      { priority },
    );
    memories.forEach(([id], i) => target()?.bank?.put(id, vecs[i]));
  }
}
