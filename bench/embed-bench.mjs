// Embedder speed, accuracy and memory: the wasm embedder (npm-embed/pkg-embed, run directly in this
// process, no worker) or onnxruntime-node on the same ONNX file, one thread, ms per text at
// 16/128/256 tokens with batch 1 and 8 (median of 5 runs after a warm-up; wall time and process
// CPU time, which a busy machine disturbs less), load time, the cosine of the 40 reference texts
// against sentence-transformers' vectors (min and mean), peak RSS.
// The ONNX file: MODEL_FILE=name in MODEL_DIR (default: the shipped minilm-l6-v2-int8.onnx); the
// worker mode loads the embedder package's own model (npm-embed/models), or its file from MODEL_DIR.
// Run one runtime per process so the RSS is its own:
//   node bench/embed-bench.mjs wasm [MODEL_DIR]       (PKG_EMBED=dir: another wasm-bindgen output)
//   node bench/embed-bench.mjs worker [MODEL_DIR]   (createEmbedder: load, speed, memory added)
//   ORT=/tmp/ortbench/node_modules/onnxruntime-node node bench/embed-bench.mjs ort [MODEL_DIR]
// Texts: runs of whole lowercase words of a real session that are single WordPiece tokens, so
// each text has exactly 16/128/256 tokens with [CLS]/[SEP] (the same texts as the native bench
// in bench/embed_native.rs). onnxruntime gets the token ids directly (no tokenizer): its figures
// exclude tokenization, the wasm ones include it.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const [runtime = "wasm", modelArg] = process.argv.slice(2);
const modelDir = modelArg ?? fileURLToPath(new URL("../models/out/", import.meta.url));
const DIM = 384;
const modelFile = `${modelDir}/${process.env.MODEL_FILE ?? "minilm-l6-v2-int8.onnx"}`;
const tokenizer = JSON.parse(readFileSync(`${modelDir}/tokenizer.json`, "utf8"));
const vocab = tokenizer.model.vocab;
const session = JSON.parse(
  readFileSync(
    new URL("../tests/data/sessions/swe-traj/django__django-11087.json", import.meta.url),
    "utf8",
  ),
);
const words = session.messages
  .flatMap((m) => (typeof m.content === "string" ? m.content.split(/[^A-Za-z]+/) : []))
  .map((w) => w.toLowerCase())
  .filter((w) => w && Object.hasOwn(vocab, w));

/** `n` texts of exactly `tokens` tokens, and their ids. */
function texts(tokens, n) {
  const k = tokens - 2;
  return Array.from({ length: n }, (_, i) => {
    const w = words.slice(i * k, (i + 1) * k);
    return { text: w.join(" "), ids: [vocab["[CLS]"], ...w.map((x) => vocab[x]), vocab["[SEP]"]] };
  });
}

async function wasmRuntime() {
  const pkg = process.env.PKG_EMBED
    ? pathToFileURL(`${process.env.PKG_EMBED}/`)
    : new URL("../npm-embed/pkg-embed/", import.meta.url);
  const glue = await import(new URL("smarter_compact.js", pkg).href);
  const wasm = readFileSync(new URL("smarter_compact_bg.wasm", pkg));
  let t = performance.now();
  glue.initSync({ module: new WebAssembly.Module(wasm) });
  const compileMs = performance.now() - t;
  t = performance.now();
  const e = new glue.Embedder(readFileSync(modelFile), readFileSync(`${modelDir}/tokenizer.json`));
  const loadMs = performance.now() - t;
  const run = (batch) => {
    const flat = e.embed(batch.map((b) => b.text));
    return batch.map((_, i) => flat.subarray(i * DIM, (i + 1) * DIM));
  };
  return { compileMs, loadMs, run };
}

async function ortRuntime() {
  const ort = createRequire(import.meta.url)(process.env.ORT ?? "onnxruntime-node");
  const t = performance.now();
  const s = await ort.InferenceSession.create(modelFile, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
  });
  const loadMs = performance.now() - t;
  const run = async (batch) => {
    const seq = Math.max(...batch.map((b) => b.ids.length));
    const ids = new BigInt64Array(batch.length * seq);
    const mask = new BigInt64Array(batch.length * seq);
    batch.forEach((b, r) =>
      b.ids.forEach((id, j) => ((ids[r * seq + j] = BigInt(id)), (mask[r * seq + j] = 1n))),
    );
    const dims = [batch.length, seq];
    const out = await s.run({
      input_ids: new ort.Tensor("int64", ids, dims),
      attention_mask: new ort.Tensor("int64", mask, dims),
    });
    const h = out.last_hidden_state.data;
    return batch.map((b, r) => {
      const v = new Float32Array(DIM);
      for (let j = 0; j < b.ids.length; j++)
        for (let d = 0; d < DIM; d++) v[d] += h[(r * seq + j) * DIM + d];
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    });
  };
  return { compileMs: 0, loadMs, run };
}

// `worker`: the packaged path (createEmbedder, worker thread, the embedder package found in
// SMARTER_COMPACT_EMBED_DIR, else npm-embed/, with its own model unless MODEL_DIR is given): load
// time, speed, and the memory the embedder adds to this process (RSS before it starts, once
// ready, after 64 texts of 128 tokens, and the peak; MB = 10^6 bytes), with the worker's wasm
// memory and V8 heap.
if (runtime === "worker") {
  const { createEmbedder } = await import("../npm/js/embedder.js");
  const embedDir =
    process.env.SMARTER_COMPACT_EMBED_DIR ??
    fileURLToPath(new URL("../npm-embed/", import.meta.url));
  const MB = (b) => (b / 1e6).toFixed(0);
  const batch = texts(128, 8).map((x) => x.text);
  const many = texts(128, 64).map((x) => x.text);
  const rssBefore = process.memoryUsage.rss();
  const t = performance.now();
  const e = await createEmbedder({ embedDir, ...(modelArg ? { modelDir } : {}) });
  const readyMs = performance.now() - t;
  const rssReady = process.memoryUsage.rss();
  const atReady = e.worker;
  const t2 = performance.now();
  const calls = 4;
  for (let i = 0; i < calls; i++) await e.embed(batch);
  const ms = (performance.now() - t2) / (calls * batch.length);
  await e.embed(many);
  const rssAfter = process.memoryUsage.rss();
  const w = e.worker;
  console.log(`worker: ready ${readyMs.toFixed(0)} ms (load in worker ${e.info.loadMs} ms)`);
  console.log(`worker 128 tokens batch ${batch.length}: ${ms.toFixed(1)} ms/text wall`);
  await e.close();
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(
    `worker: process RSS before ${MB(rssBefore)} MB, ready ${MB(rssReady)} MB, after ${many.length} texts of 128 tokens ${MB(rssAfter)} MB, peak ${MB(peak)} MB`,
  );
  console.log(
    `worker: added by the embedder: ready ${MB(rssReady - rssBefore)} MB, after ${many.length} texts ${MB(rssAfter - rssBefore)} MB, peak ${MB(peak - rssBefore)} MB`,
  );
  console.log(
    `worker: wasm memory ${MB(w.wasmBytes)} MB (ready ${MB(atReady.wasmBytes)} MB), V8 heap ${MB(w.heapBytes)} MB, other external ${MB(w.externalBytes - w.wasmBytes)} MB`,
  );
  console.log(`worker: peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
  process.exit(0);
}

const rt = runtime === "ort" ? await ortRuntime() : await wasmRuntime();
console.log(
  `${runtime}: compile ${rt.compileMs.toFixed(0)} ms, model load ${rt.loadMs.toFixed(0)} ms`,
);
for (const tokens of [16, 128, 256]) {
  const all = texts(tokens, 8);
  for (const batch of [1, 8]) {
    const ms = [];
    const cpu = [];
    for (let rep = 0; rep < 6; rep++) {
      const t = performance.now();
      const c = process.cpuUsage();
      for (let i = 0; i < all.length; i += batch) await rt.run(all.slice(i, i + batch));
      ms.push((performance.now() - t) / all.length);
      const used = process.cpuUsage(c);
      cpu.push((used.user + used.system) / 1000 / all.length);
    }
    const median = (xs) => xs.slice(1).sort((a, b) => a - b)[2];
    console.log(
      `${runtime} ${tokens} tokens batch ${batch}: ${median(ms).toFixed(1)} ms/text wall, ${median(cpu).toFixed(1)} ms CPU`,
    );
  }
}
// Accuracy: the 40 reference texts in one call. Not for onnxruntime, which gets token ids and has
// no tokenizer here (models/verify.py checks it against the same vectors).
const reference = JSON.parse(
  readFileSync(new URL("../tests/data/embeddings/minilm_reference.json", import.meta.url), "utf8"),
);
if (runtime !== "ort") {
  const got = await rt.run(reference.texts.map((text) => ({ text })));
  const cos = got.map((v, i) => cosine(v, reference.vectors[i]));
  console.log(
    `${runtime}: ${cos.length} reference texts, cos min ${Math.min(...cos).toFixed(7)} mean ${(cos.reduce((a, b) => a + b, 0) / cos.length).toFixed(7)}`,
  );
}
console.log(`${runtime}: peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);

function cosine(a, b) {
  let [ab, aa, bb] = [0, 0, 0];
  for (let i = 0; i < DIM; i++)
    [ab, aa, bb] = [ab + a[i] * b[i], aa + a[i] * a[i], bb + b[i] * b[i]];
  return ab / Math.sqrt(aa * bb);
}
