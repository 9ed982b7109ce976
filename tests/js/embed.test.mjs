// The wasm embedder in its worker thread, on the real model (npm/models/, or
// SMARTER_COMPACT_MODEL_DIR): reference vectors, errors, and the host's event loop staying free
// while a backlog of real session messages is embedded.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createEmbedder, DIM } from "../../npm/js/embedder.js";

const shared = new URL("../../../shared/data/", import.meta.url);
const reference = JSON.parse(readFileSync(new URL("embeddings/minilm_reference.json", shared), "utf8"));

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a) => Math.sqrt(dot(a, a));
const cos = (a, b) => dot(a, b) / (norm(a) * norm(b));

let embedder;
before(async () => {
  embedder = await createEmbedder();
});
after(() => embedder?.close());

test("info describes the model", () => {
  assert.equal(embedder.info.dim, DIM);
  assert.equal(DIM, 384);
  assert.match(embedder.info.model, /all-MiniLM-L6-v2/);
  console.log(`wasm embedder load ${embedder.info.loadMs} ms (in the worker)`);
});

test("the 40 reference texts match sentence-transformers (cos >= 0.999)", async () => {
  assert.equal(reference.texts.length, 40);
  const vectors = await embedder.embed(reference.texts);
  assert.equal(vectors.length, 40);
  const c = vectors.map((v, i) => {
    assert.ok(v instanceof Float32Array && v.length === DIM, `text ${i}: not a ${DIM}-vector`);
    assert.ok(Math.abs(norm(v) - 1) < 1e-4, `text ${i}: not unit length`);
    return cos(v, reference.vectors[i]);
  });
  c.forEach((x, i) => assert.ok(x >= 0.999, `text ${i}: cos ${x}`));
  const min = Math.min(...c);
  const mean = c.reduce((s, x) => s + x, 0) / c.length;
  console.log(`wasm: 40 reference texts, cos min ${min.toFixed(7)} mean ${mean.toFixed(7)}`);
  // One at a time through the queue gives the same vectors as the batched call.
  const single = await Promise.all(reference.texts.slice(0, 6).map((t) => embedder.embed([t])));
  single.forEach(([v], i) => assert.ok(cos(v, vectors[i]) > 0.99999, `text ${i}: single vs batch`));
});

test("bad input rejects with E_ARG; no texts give no vectors", async () => {
  await assert.rejects(embedder.embed("not an array"), { code: "E_ARG" });
  await assert.rejects(embedder.embed([1, 2]), { code: "E_ARG" });
  assert.deepEqual(await embedder.embed([]), []);
});

test("a missing model dir rejects with E_NO_MODEL and says how to build it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sc-no-model-"));
  await assert.rejects(createEmbedder({ modelDir: dir }), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.code, "E_NO_MODEL");
    assert.match(e.message, /minilm-l6-v2\.onnx/);
    assert.match(e.message, /build_model\.py/);
    return true;
  });
});

test("an unreadable model rejects with E_EMBED", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sc-bad-model-"));
  writeFileSync(join(dir, "minilm-l6-v2.onnx"), "not an onnx file");
  copyFileSync(join(embedder.info.modelDir, "tokenizer.json"), join(dir, "tokenizer.json"));
  await assert.rejects(createEmbedder({ modelDir: dir }), { code: "E_EMBED" });
});

/** The first 300 characters of every non-empty message of the real sessions. */
function sessionTexts(limit) {
  const dir = new URL("sessions/swe-traj/", shared);
  const texts = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    for (const m of JSON.parse(readFileSync(new URL(file, dir), "utf8")).messages) {
      if (typeof m.content === "string" && m.content.trim()) texts.push(m.content.slice(0, 300));
      if (texts.length === limit) return texts;
    }
  }
  return texts;
}

test("the host's event loop stays free while a backlog of 240 messages is embedded", async () => {
  const texts = sessionTexts(240);
  assert.equal(texts.length, 240);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  delay.enable();
  const started = performance.now();
  // As the ingest path would: one request per message, all queued at once.
  const vectors = await Promise.all(texts.map((t) => embedder.embed([t])));
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  clearInterval(ticker);
  assert.equal(vectors.length, texts.length);
  vectors.forEach(([v]) => assert.ok(v.length === DIM && Math.abs(norm(v) - 1) < 1e-4));
  assert.ok(delay.count > 0 && ticks > 0, "the event-loop monitor saw no samples");
  const ms = (ns) => (ns / 1e6).toFixed(1);
  console.log(
    `event loop during ${texts.length} texts (${seconds.toFixed(1)} s, ${((seconds * 1000) / texts.length).toFixed(0)} ms/text): ` +
      `delay p50 ${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))} ms, max ${ms(delay.max)} ms ` +
      `(10 ms sampling interval included: an idle loop reads ~10.1/11.5/14), ` +
      `${delay.count} samples, ${ticks} timer ticks`,
  );
});
