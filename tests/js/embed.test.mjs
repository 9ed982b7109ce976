// The wasm embedder in its worker thread, on the real model (npm-embed/, the embedder package the
// checkout links as node_modules/smarter-compact-embed, or
// SMARTER_COMPACT_MODEL_DIR): reference vectors, batching, edge-case texts and errors. This is
// the embedder's test suite: the shipped embedder is this wasm build, so the tract model is not
// also built natively for a test (`cargo bench --features embed` runs it natively). The host's event loop during a
// background backlog is measured in hybrid-probe.test.mjs.
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createEmbedder, DIM } from "../../npm/js/embedder.js";
import { scratchDir } from "./helpers/scratch.mjs";

const data = new URL("../data/", import.meta.url);
const reference = JSON.parse(
  readFileSync(new URL("embeddings/minilm_reference.json", data), "utf8"),
);

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

test("once loaded, the worker holds neither the model file's bytes nor the module's outside wasm memory", () => {
  const { wasmBytes, heapBytes, externalBytes } = embedder.worker;
  assert.ok(wasmBytes > 90e6, `wasm memory ${wasmBytes} holds the model`);
  assert.ok(heapBytes > 0, "the worker reports its V8 heap");
  // What the worker's objects own besides the wasm memory: the model file alone is 25 MB and the
  // wasm module 17 MB, so a copy of either left for the garbage collector shows here.
  const besides = externalBytes - wasmBytes;
  assert.ok(besides < 16e6, `${besides} bytes outside wasm memory`);
  console.log(
    `worker: wasm memory ${(wasmBytes / 2 ** 20).toFixed(0)} MiB, V8 heap ${(heapBytes / 2 ** 20).toFixed(1)} MiB, other external ${(besides / 2 ** 20).toFixed(1)} MiB`,
  );
});

// The shipped model stores its weights in int8 (models/README.md): measured against these 40
// vectors in wasm, cos min 0.99947 and mean 0.99981 (the f32 file: min 0.9999997), so the f32
// file's bound holds for it as well.
const MIN_COS = 0.999;

test(`the 40 reference texts match sentence-transformers (cos >= ${MIN_COS})`, async () => {
  assert.equal(reference.texts.length, 40);
  const vectors = await embedder.embed(reference.texts);
  assert.equal(vectors.length, 40);
  const c = vectors.map((v, i) => {
    assert.ok(v instanceof Float32Array && v.length === DIM, `text ${i}: not a ${DIM}-vector`);
    assert.ok(Math.abs(norm(v) - 1) < 1e-4, `text ${i}: not unit length`);
    return cos(v, reference.vectors[i]);
  });
  c.forEach((x, i) => assert.ok(x >= MIN_COS, `text ${i}: cos ${x}`));
  const min = Math.min(...c);
  const mean = c.reduce((s, x) => s + x, 0) / c.length;
  console.log(
    `wasm: 40 reference texts, cos min ${min.toFixed(7)} (1 - min ${(1 - min).toExponential(1)}) mean ${mean.toFixed(7)}`,
  );
  // Calls queued at once in the worker give the same vectors as the one batched call.
  const single = await Promise.all(reference.texts.slice(0, 6).map((t) => embedder.embed([t])));
  single.forEach(([v], i) => assert.ok(cos(v, vectors[i]) > 0.99999, `text ${i}: single vs batch`));
});

test("texts batched with padding give the vectors they get alone", async () => {
  // Many short texts beside a few long ones, so the embedder's planner pads real batches.
  const short = [
    "ok",
    "cargo test",
    "fn main() {}",
    "error[E0308]: mismatched types",
    "ls -la src/",
  ];
  const texts = [
    ...reference.texts.slice(0, 4),
    ...Array.from({ length: 20 }, (_, i) => short[i % 5]),
  ];
  const batched = await embedder.embed(texts);
  assert.equal(batched.length, texts.length);
  for (const [i, t] of texts.entries()) {
    const [alone] = await embedder.embed([t]);
    const diff = Math.max(...alone.map((x, j) => Math.abs(x - batched[i][j])));
    assert.ok(
      diff < 1e-5,
      `text ${i} (${JSON.stringify(t.slice(0, 20))}): batched differs by ${diff}`,
    );
  }
});

test("empty, megabyte, space-led and one-huge-word texts each give a unit vector", async () => {
  const unit = (v) => Math.abs(norm(v) - 1) < 1e-4;
  const maxDiff = (a, b) => Math.max(...a.map((x, j) => Math.abs(x - b[j])));
  const [empty] = await embedder.embed([""]);
  assert.ok(unit(empty), "the empty text embeds like [CLS] [SEP]");
  // 1 MB of words: the tokenizer reads a 16 KiB prefix, which must give the whole text's vector.
  const long = "the build failed because the linker ran out of memory; ".repeat(18_000);
  const [whole, prefix] = await embedder.embed([long, long.slice(0, 5_000)]);
  assert.ok(unit(whole));
  assert.ok(maxDiff(whole, prefix) < 1e-6, "the prefix shortcut changed the vector");
  // Mostly whitespace: no shortcut; leading spaces do not change BERT's tokens.
  const [spaced, plain] = await embedder.embed([
    " ".repeat(100_000) + "hello world",
    "hello world",
  ]);
  assert.ok(maxDiff(spaced, plain) < 1e-6);
  // One huge word of two-byte characters (no whitespace to cut at): [UNK], still a vector.
  const [word] = await embedder.embed(["é".repeat(20_000)]);
  assert.ok(unit(word));
});

test("bad input rejects with E_ARG; no texts give no vectors", async () => {
  await assert.rejects(embedder.embed("not an array"), { code: "E_ARG" });
  await assert.rejects(embedder.embed([1, 2]), { code: "E_ARG" });
  assert.deepEqual(await embedder.embed([]), []);
});

test("a missing model dir rejects with E_NO_MODEL and says how to build it", async () => {
  const dir = scratchDir("sc-no-model-");
  await assert.rejects(createEmbedder({ modelDir: dir }), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.code, "E_NO_MODEL");
    assert.match(e.message, /minilm-l6-v2-int8\.onnx/);
    assert.match(e.message, /make build-embed/);
    return true;
  });
});

test("an unreadable model rejects with E_EMBED", async () => {
  const dir = scratchDir("sc-bad-model-");
  writeFileSync(join(dir, "minilm-l6-v2-int8.onnx"), "not an onnx file");
  copyFileSync(join(embedder.info.modelDir, "tokenizer.json"), join(dir, "tokenizer.json"));
  await assert.rejects(createEmbedder({ modelDir: dir }), { code: "E_EMBED" });
});

test('search mode "hybrid" embeds the whole backlog first; without a model it is an error, not full-text', async () => {
  const { createCompactor } = await import("../../npm/js/index.js");
  const stateDir = scratchDir("sc-hybrid-");
  const { messages } = JSON.parse(
    readFileSync(new URL("sessions/swe-traj/django__django-11087.json", data), "utf8"),
  );
  // The first 30 messages (64 chunks): a real backlog at a third of the whole session's embedding.
  const c = await createCompactor({ sessionId: "forced", stateDir, embedder });
  await c.transform(messages.slice(0, 30), { model: "test" });
  const found = await c.search("the failing test and the traceback", {
    scope: "all",
    mode: "hybrid",
  });
  assert.equal(found.mode, "hybrid");
  assert.ok(found.coverage.chunks >= 30, `${found.coverage.chunks} chunks`);
  assert.equal(found.coverage.embedded, found.coverage.chunks, "every chunk has its vector");
  await c.close();
  const none = await createCompactor({ sessionId: "no-model", stateDir, embedder: false });
  await none.transform(messages.slice(0, 4), { model: "test" });
  await assert.rejects(none.search("traceback", { mode: "hybrid" }), { code: "E_NO_MODEL" });
  assert.equal(
    (await none.search("traceback", { scope: "all" })).mode,
    "fts",
    "auto falls back to full-text",
  );
  await none.close();
});
