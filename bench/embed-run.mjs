#!/usr/bin/env node
// `make bench-embed`: the embedder's speed, accuracy and memory for each model variant
// (models/README.md), each runtime in its own process, written to bench/EMBED.md; the variants'
// table also goes into models/README.md. Every figure in those tables comes from this run:
//   wasm     node bench/embed-bench.mjs wasm     (tract wasm SIMD, npm-embed/pkg-embed, no worker)
//   native   cargo bench --features embed --bench embed_native (tract native, release profile)
//   ort      node bench/embed-bench.mjs ort      (onnxruntime-node, only if it installs from the
//            npm registry into target/ort; otherwise the file says why it was skipped)
//   mrr      node --test tests/js/hybrid-probe.test.mjs (hybrid vs full-text MRR on the
//            paraphrase probes, the model given through SMARTER_COMPACT_MODEL_DIR)
//   worker   node bench/embed-bench.mjs worker   (createEmbedder: the packaged worker path with the
//            embedder package npm-embed/ (SMARTER_COMPACT_EMBED_DIR), its shipped model; the RSS
//            it adds to the process)
// The MRR runs go EMBED_MRR_JOBS (default 2) at a time, after every speed run: their figures do
// not depend on the machine's load, the speed figures do.
// A whole run also puts the new EMBED.md into bench/REPORT.md's Embeddings subsection.
// EMBED_VARIANTS=f32,int8 measures some variants only; EMBED_NATIVE=0 leaves tract native out,
// EMBED_MRR=0 the MRR runs. A partial run prints its tables but writes no file.
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { mergeEmbedReport } from "./lib/report.mjs";

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH, "..");
const ORT_VERSION = "1.30.0";
const ORT_DIR = join(ROOT, "target", "ort");
const NATIVE_TARGET = join(ROOT, "target", "embed-native");
/** The embedder package (smarter-compact-embed): its wasm build and its model. */
const EMBED_DIR = join(ROOT, "npm-embed");
/** The issue's goals: the embedder's addition to a process's RSS, and wasm's speed next to
 * onnxruntime-node's (ort ms ÷ wasm ms per text, one thread). */
const GOAL_RSS_MB = 300;
const GOAL_SPEED = 0.33;
const MODELS = join(ROOT, "models", "out");
/** The model variants (models/variants.py, models/build_model.py), f32 first: the baseline. */
const VARIANTS = [
  { key: "f32", file: "minilm-l6-v2.onnx", what: "float32 (build_model.py)" },
  {
    key: "fp16",
    file: "minilm-l6-v2-fp16.onnx",
    what: "fp16-stored: 2-D initializers float16 + Cast, float32 compute (build_model.py --fp16)",
  },
  {
    key: "int8",
    file: "minilm-l6-v2-int8.onnx",
    what: "int8 weight-only: int8 + DequantizeLinear (one scale per output column per 32 input rows), float32 compute (variants.py)",
  },
  {
    key: "dynint8",
    file: "minilm-l6-v2-dynint8.onnx",
    what: "int8 dynamic: onnxruntime quantize_dynamic, MatMulInteger on uint8 activations (variants.py)",
  },
];
// The file the package loads: `modelFile` of the embedder package's index.js.
const SHIPPED = (await import(pathToFileURL(join(EMBED_DIR, "index.js")).href)).modelFile;
if (!VARIANTS.some((v) => v.file === SHIPPED))
  throw new Error(`npm-embed/index.js ships ${SHIPPED}, which is not a measured variant`);
const chosen = process.env.EMBED_VARIANTS?.split(",") ?? VARIANTS.map((v) => v.key);
const variants = VARIANTS.filter((v) => chosen.includes(v.key));
const partial = variants.length < VARIANTS.length || process.env.EMBED_MRR === "0";
for (const v of variants)
  if (!existsSync(join(MODELS, v.file)))
    throw new Error(`models/out/${v.file} is missing: run \`make model-variants\``);
const t0 = performance.now();
const log = (...a) =>
  console.log(`[bench-embed ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s]`, ...a);

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  return {
    ok: r.status === 0,
    out: `${r.stdout ?? ""}${r.stderr ?? ""}`,
    status: r.status,
    error: r.error,
  };
}

/** The figures of one runtime's output: ms per text by (tokens, batch), load, RSS. */
function parse(out) {
  const cells = {};
  for (const m of out.matchAll(
    /^\S+ +(\d+) tokens,? batch (\d+): ([\d.]+) ms\/text wall(?:, ([\d.]+) ms CPU)?/gm,
  ))
    cells[`${m[1]}/${m[2]}`] = { wall: +m[3], cpu: m[4] == null ? null : +m[4] };
  const num = (re) => {
    const m = out.match(re);
    return m ? +m[1] : null;
  };
  return {
    cells,
    compileMs: num(/compile (\d+) ms/),
    loadMs: num(/model load (\d+) ms/),
    readyMs: num(/ready (\d+) ms/),
    workerLoadMs: num(/load in worker (\d+) ms/),
    rssMB: num(/peak RSS (\d+) MB/),
    added: out
      .match(/added by the embedder: ready (\d+) MB, after (\d+) texts (\d+) MB, peak (\d+) MB/)
      ?.slice(1)
      .map(Number),
    rssLine: out.match(/^worker: process RSS .*$/m)?.[0],
    memLine: out.match(/^worker: wasm memory .*$/m)?.[0],
    cos: out
      .match(/reference texts, cos min ([\d.]+) mean ([\d.]+)/)
      ?.slice(1)
      .map(Number),
  };
}

const version = (cmd, args) => {
  const r = run(cmd, args);
  return r.ok ? r.out.trim().split("\n")[0] : null;
};
const lockVersion = (name) =>
  readFileSync(join(ROOT, "Cargo.lock"), "utf8").match(
    new RegExp(`name = "${name}"\\nversion = "([^"]+)"`),
  )?.[1] ?? "?";

const rows = [];
/** Per variant: { wasm, native, ort, mrr } as parsed from its runs. */
const measured = new Map(variants.map((v) => [v.key, {}]));
const loadStart = loadavg()[0];

/** A folder holding `variant`'s file under the name the embedder package loads, and the tokenizer. */
function modelDirOf(variant) {
  const dir = mkdtempSync(join(tmpdir(), `sc-embed-${variant.key}-`));
  symlinkSync(join(MODELS, variant.file), join(dir, SHIPPED));
  symlinkSync(join(MODELS, "tokenizer.json"), join(dir, "tokenizer.json"));
  return dir;
}

for (const v of variants) {
  log(`${v.key} wasm: MODEL_FILE=${v.file} node bench/embed-bench.mjs wasm`);
  const r = run(process.execPath, [join(BENCH, "embed-bench.mjs"), "wasm"], { MODEL_FILE: v.file });
  if (!r.ok)
    throw new Error(`embed-bench wasm ${v.key} failed (${r.status}):\n${r.out.slice(-3000)}`);
  process.stdout.write(r.out);
  measured.get(v.key).wasm = parse(r.out);
  rows.push({ runtime: "tract wasm SIMD (Node, in process, no worker)", v, ...parse(r.out) });
}

let workerRun = null;
{
  const v = VARIANTS.find((x) => x.file === SHIPPED);
  log(`worker (${v.key}): SMARTER_COMPACT_EMBED_DIR=npm-embed node bench/embed-bench.mjs worker`);
  const r = run(process.execPath, [join(BENCH, "embed-bench.mjs"), "worker"], {
    SMARTER_COMPACT_EMBED_DIR: EMBED_DIR,
  });
  if (!r.ok) throw new Error(`embed-bench worker failed (${r.status}):\n${r.out.slice(-3000)}`);
  process.stdout.write(r.out);
  workerRun = parse(r.out);
  rows.push({
    runtime: "packaged path: `createEmbedder` (wasm SIMD in a worker thread)",
    v,
    ...parse(r.out),
  });
}

// EMBED_NATIVE=0 leaves the native bench out (its release build of tract takes long); the file
// then says so.
let nativeSkipped = null;
if (process.env.EMBED_NATIVE === "0") {
  nativeSkipped = "EMBED_NATIVE=0 was set";
  log(`native skipped: ${nativeSkipped}`);
} else {
  for (const v of variants) {
    log(`${v.key} native: cargo bench --features embed --bench embed_native (release profile)`);
    const r = run(
      "cargo",
      ["bench", "--features", "embed", "--bench", "embed_native", "--target-dir", NATIVE_TARGET],
      { SMARTER_COMPACT_MODEL_FILE: v.file },
    );
    if (!r.ok)
      throw new Error(`native bench ${v.key} failed (${r.status}):\n${r.out.slice(-3000)}`);
    const lines = r.out.split("\n").filter((l) => l.startsWith("native"));
    console.log(lines.join("\n"));
    measured.get(v.key).native = parse(lines.join("\n"));
    rows.push({
      runtime: "tract native (`cargo bench`, release profile)",
      v,
      ...parse(lines.join("\n")),
    });
  }
}

// onnxruntime-node: only from the npm registry (no install scripts, so nothing is downloaded
// from anywhere else); skipped with the reason when that fails.
let ort = null;
{
  log(`ort: npm install --ignore-scripts onnxruntime-node@${ORT_VERSION} into target/ort`);
  mkdirSync(ORT_DIR, { recursive: true });
  if (!existsSync(join(ORT_DIR, "package.json")))
    writeFileSync(join(ORT_DIR, "package.json"), '{ "name": "ort-scratch", "private": true }\n');
  const inst = run("npm", [
    "install",
    "--prefix",
    ORT_DIR,
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    "--no-save",
    `onnxruntime-node@${ORT_VERSION}`,
  ]);
  const mod = join(ORT_DIR, "node_modules", "onnxruntime-node");
  if (!inst.ok)
    ort = { skipped: `npm install failed (exit ${inst.status}): ${lastLine(inst.out)}` };
  else {
    ort = { ok: true };
    for (const v of variants) {
      log(`${v.key} ort: MODEL_FILE=${v.file} node bench/embed-bench.mjs ort`);
      const r = run(process.execPath, [join(BENCH, "embed-bench.mjs"), "ort"], {
        ORT: mod,
        MODEL_FILE: v.file,
      });
      if (!r.ok) {
        ort = { skipped: `installed, but the bench failed (exit ${r.status}): ${lastLine(r.out)}` };
        break;
      }
      process.stdout.write(r.out);
      measured.get(v.key).ort = parse(r.out);
      rows.push({
        runtime: `onnxruntime-node ${ORT_VERSION}, one thread (token ids given, no tokenizer)`,
        v,
        ...parse(r.out),
      });
    }
  }
  if (ort.skipped) log(`ORT skipped: ${ort.skipped}`);
}

// The hybrid-search MRR of each variant: the paraphrase-probe test on the packaged path
// (createEmbedder, background embedding), its figures parsed from its output. Its assertion
// (hybrid > fts) may fail for a variant: the figures are still printed before it and kept.
if (process.env.EMBED_MRR !== "0") {
  const jobs = Math.max(1, Number(process.env.EMBED_MRR_JOBS ?? 2));
  const todo = [...variants];
  const one = async () => {
    for (let v = todo.shift(); v; v = todo.shift()) {
      const dir = modelDirOf(v);
      log(
        `${v.key} mrr: SMARTER_COMPACT_MODEL_DIR=${dir} node --test tests/js/hybrid-probe.test.mjs`,
      );
      const r = await runAsync(process.execPath, ["--test", "tests/js/hybrid-probe.test.mjs"], {
        SMARTER_COMPACT_MODEL_DIR: dir,
      });
      rmSync(dir, { recursive: true, force: true });
      const m = r.out.match(/paraphrase probes: (\d+) .*?MRR fts ([\d.]+), hybrid ([\d.]+)/);
      if (!m)
        throw new Error(`hybrid-probe ${v.key}: no MRR in its output:\n${r.out.slice(-3000)}`);
      log(`${v.key} mrr: ${m[0]}`);
      measured.get(v.key).mrr = { probes: +m[1], fts: +m[2], hybrid: +m[3], passed: r.ok };
    }
  };
  await Promise.all(Array.from({ length: jobs }, one));
}

/** `run`, without blocking: so that the MRR runs can go side by side. */
function runAsync(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", (error) => resolve({ ok: false, out, status: null, error }));
    child.on("close", (status) => resolve({ ok: status === 0, out, status }));
  });
}

function lastLine(text) {
  const ls = text
    .trim()
    .split("\n")
    .filter((l) => l.trim());
  return (ls.at(-1) ?? "").slice(0, 300).replace(/\|/g, "\\|");
}

// the speed table: one row per runtime and variant, one column per (tokens, batch) seen
const keys = [...new Set(rows.flatMap((r) => Object.keys(r.cells)))].sort((a, b) => {
  const [ta, ba] = a.split("/").map(Number);
  const [tb, bb] = b.split("/").map(Number);
  return ta - tb || ba - bb;
});
const fmt = (x) => (x == null ? "–" : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const cell = (c) => (c ? `${fmt(c.wall)}${c.cpu != null ? ` (${fmt(c.cpu)})` : ""}` : "–");
const secs = (ms) => (ms == null ? null : `${(ms / 1000).toFixed(2)} s`);
const table = [
  `| runtime | model | ${keys.map((k) => `${k.split("/")[0]} tok b${k.split("/")[1]}`).join(" | ")} | model load | peak RSS |`,
  `|---|---|${keys.map(() => "---").join("|")}|---|---|`,
  ...rows.map(
    (r) =>
      `| ${r.runtime} | ${r.v.key} | ${keys.map((k) => cell(r.cells[k])).join(" | ")} | ${
        r.readyMs != null
          ? `ready ${secs(r.readyMs)} (load in the worker ${secs(r.workerLoadMs)})`
          : `${secs(r.loadMs) ?? "–"}${r.compileMs ? ` (+${secs(r.compileMs)} compile)` : ""}`
      } | ${r.rssMB != null ? `${r.rssMB} MB` : "–"} |`,
  ),
].join("\n");

// the variants table: size, accuracy, hybrid-search MRR and the b1 speed of each
const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
const cosCell = (c) => (c ? `${c[0].toFixed(7)} / ${c[1].toFixed(7)}` : "–");
// CPU time (less disturbed by a busy machine than wall time), wall time where none was measured
const b1 = (p) =>
  p
    ? [16, 128, 256]
        .map((t) => p.cells[`${t}/1`])
        .map((c) => fmt(c?.cpu ?? c?.wall))
        .join(" / ")
    : "–";
const baseline = measured.get("f32")?.mrr;
/**
 * Whether a variant keeps cos >= 0.99 (every runtime measured) and the f32 file's hybrid MRR.
 * "Keeps" allows less than one probe's step from rank 1 to rank 2, 1/(2 × probes): the MRR moves
 * by about that much for vectors that differ by 1e-7 in cosine (measured: fp16 0.278, f32 0.277).
 */
function verdict(key) {
  const m = measured.get(key);
  const cosMin = [m.wasm?.cos, m.native?.cos].filter(Boolean).map((c) => c[0]);
  if (cosMin.some((c) => c < 0.99)) return "no: cos min < 0.99";
  if (!m.mrr || !baseline) return "cos ok; MRR not measured";
  const step = 1 / (2 * baseline.probes);
  if (m.mrr.hybrid < baseline.hybrid - step)
    return `no: MRR ${m.mrr.hybrid} < f32 ${baseline.hybrid} − ${step.toFixed(4)}`;
  return m.mrr.hybrid < baseline.hybrid
    ? `yes (MRR −${(baseline.hybrid - m.mrr.hybrid).toFixed(3)})`
    : "yes";
}
const variantRows = variants.map((v) => {
  const bytes = readFileSync(join(MODELS, v.file));
  const m = measured.get(v.key);
  const mrr = m.mrr ? `${m.mrr.hybrid.toFixed(3)} (fts ${m.mrr.fts.toFixed(3)})` : "–";
  const rss = [m.wasm?.rssMB, m.native?.rssMB].map((x) => x ?? "–").join(" / ");
  return `| ${v.key}${v.file === SHIPPED ? " (**shipped**)" : ""} | \`${v.file}\` | ${mb(bytes.length)} | ${mb(gzipSync(bytes, { level: 9 }).length)} | ${cosCell(m.wasm?.cos)} | ${cosCell(m.native?.cos)} | ${mrr} | ${b1(m.wasm)} | ${b1(m.native)} | ${b1(m.ort)} | ${rss} MB | ${verdict(v.key)} |`;
});
const variantTable = [
  "| variant | file | size | gzip -9 | cos min / mean, wasm | cos min / mean, native | hybrid MRR (fts) | wasm ms CPU/text 16 / 128 / 256 tok | native ms CPU/text 16 / 128 / 256 tok | onnxruntime-node ms CPU/text 16 / 128 / 256 tok | peak RSS wasm / native | cos ≥ 0.99 and f32's MRR (± one probe's rank 1→2) |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ...variantRows,
].join("\n");
const variantNotes = `Variants: ${variants.map((v) => `**${v.key}** ${v.what}`).join("; ")}. Cosine: the 40 texts of \`tests/data/embeddings/minilm_reference.json\` (sentence-transformers 6.2.0, up to 256 tokens) in one \`embed()\` call, against the reference vectors. MRR: \`tests/js/hybrid-probe.test.mjs\` (${baseline ? `${baseline.probes} paraphrase probes` : "paraphrase probes"} over three real sessions, embedded in the background through \`createEmbedder\`), the variant's file given through \`SMARTER_COMPACT_MODEL_DIR\`. ms CPU/text: batch 1, the process's (native: the thread's) CPU time per text, the median of the speed table's runs (wall time is in the speed table).`;

// The goals, side by side in this run: wasm next to onnxruntime-node on the shipped variant, and
// the packaged worker path's addition to the process's RSS.
const shippedKey = VARIANTS.find((x) => x.file === SHIPPED).key;
const cpuOf = (p, k) => p?.cells[k]?.cpu ?? p?.cells[k]?.wall ?? null;
const speedRows = ["16/1", "128/1", "256/1", "16/8", "128/8", "256/8"].flatMap((k) => {
  const [w, o] = [measured.get(shippedKey)?.wasm, measured.get(shippedKey)?.ort].map((p) =>
    cpuOf(p, k),
  );
  if (w == null || o == null) return [];
  const ratio = o / w;
  const [tokens, batch] = k.split("/");
  return [
    `| ${tokens} tok b${batch} | ${fmt(w)} | ${fmt(o)} | ${ratio.toFixed(2)}× | ${ratio >= GOAL_SPEED ? "yes" : `no: wasm needs ${(GOAL_SPEED / ratio).toFixed(1)}× its speed`} |`,
  ];
});
const ratios = speedRows.map((r) => Number(r.split(" | ")[3].replace("×", "")));
const speedVerdict = !ratios.length
  ? ""
  : ratios.every((r) => r >= GOAL_SPEED)
    ? `Met in all ${ratios.length} cells (lowest ${Math.min(...ratios).toFixed(2)}×).`
    : `Met in ${ratios.filter((r) => r >= GOAL_SPEED).length} of ${ratios.length} cells; the lowest is ${Math.min(...ratios).toFixed(2)}×: the wasm needs ${(GOAL_SPEED / Math.min(...ratios)).toFixed(1)}× its speed there to reach ${GOAL_SPEED}×.`;
const added = workerRun?.added;
const goals = [
  `Speed: wasm ÷ onnxruntime-node per text = onnxruntime's ms ÷ the wasm's ms (CPU time per text, one thread, the shipped ${shippedKey} file in both; goal ≥ ${GOAL_SPEED}×). onnxruntime gets token ids, the wasm tokenizes as well.`,
  "",
  ...(speedRows.length
    ? [
        `| texts | wasm ms CPU/text | onnxruntime-node ${ORT_VERSION} ms CPU/text | wasm ÷ ort | ≥ ${GOAL_SPEED}× |`,
        "|---|---|---|---|---|",
        ...speedRows,
        "",
        speedVerdict,
      ]
    : [
        `Not measured in this run: ${ort?.skipped ?? "onnxruntime-node or the shipped variant's wasm run is missing"}.`,
      ]),
  "",
  added
    ? `Memory: what the packaged path (\`createEmbedder\` from npm/js, the embedder package npm-embed/ through \`SMARTER_COMPACT_EMBED_DIR\`, its worker thread) adds to the process's RSS, MB = 10^6 bytes: ${added[0]} MB once ready, ${added[2]} MB after embedding ${added[1]} texts of 128 tokens, **${added[3]} MB at the peak** (the model's load) — goal ≤ ${GOAL_RSS_MB} MB: ${added[3] <= GOAL_RSS_MB ? "met" : `not met, ${added[3] - GOAL_RSS_MB} MB over`}. ${workerRun.rssLine}; ${workerRun.memLine} (the wasm memory holds the model's decoded and optimised tensors and never shrinks; the rest is V8's compiled code for the 17 MB module and the thread's own isolate).`
    : "Memory: the worker run printed no RSS figures.",
].join("\n");

const wasm = readFileSync(join(ROOT, "npm-embed", "pkg-embed", "smarter_compact_bg.wasm"));
const machine = `${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GB, ${process.platform} ${process.arch}; Node ${process.version}, ${version("rustc", ["--version"]) ?? "rustc ?"}, tract-onnx ${lockVersion("tract-onnx")}, tokenizers ${lockVersion("tokenizers")}. Load average (1 min) ${loadStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end, on ${cpus().length} cores.`;
const generated = `Generated by \`make bench-embed\` (\`node bench/embed-run.mjs\`) on ${new Date().toISOString().slice(0, 10)}: ${machine}`;

const md = `# Embedder speed, accuracy and memory (all-MiniLM-L6-v2; shipped: \`models/out/${SHIPPED}\`)

${generated}

## Model variants

${variantTable}

${variantNotes}

## Goals

${goals}

## Speed and memory

Each runtime in its own process (so the peak RSS is its own), one thread. Texts of exactly the token counts in the header (\`[CLS]\`/\`[SEP]\` included), runs of real session words that are single WordPiece tokens; ms per text, the median of the timed runs after a warm-up run (\`bench/embed-bench.mjs\`, \`bench/embed_native.rs\`), wall time with the process's (native: the thread's) CPU time in parentheses where measured. "b1": one text per call; "bN": N texts per \`embed()\` call (the embedder's planner decides how it batches them; onnxruntime gets one plain padded batch). Peak RSS: the whole process (\`process.resourceUsage().maxRSS\`; native: \`VmHWM\`), the model file's bytes included.

${table}

${nativeSkipped ? `tract native skipped: ${nativeSkipped} (\`make bench-embed\` runs it).\n\n` : ""}${ort?.skipped ? `onnxruntime-node ${ORT_VERSION} skipped: ${ort.skipped}` : `onnxruntime-node ${ORT_VERSION} was installed from the npm registry into \`target/ort\` with \`--ignore-scripts\` (nothing downloaded from elsewhere); its figures exclude tokenization, the wasm and native ones include it.`}

Sizes: \`npm-embed/pkg-embed/smarter_compact_bg.wasm\` ${mb(wasm.length)} raw, ${mb(gzipSync(wasm, { level: 9 }).length)} gzip -9.

Reproduce: \`make bench-embed\` (needs \`make build-embed\` and \`make model-variants\`; the native bench builds in \`target/embed-native\`). One runtime by hand: \`MODEL_FILE=<file> node bench/embed-bench.mjs wasm|ort\`, \`SMARTER_COMPACT_EMBED_DIR=npm-embed node bench/embed-bench.mjs worker\`, \`SMARTER_COMPACT_MODEL_FILE=<file> cargo bench --features embed --bench embed_native\`; some variants only: \`EMBED_VARIANTS=f32,int8\` (prints, writes nothing).
`;

console.log(`\n${variantTable}\n\n${goals}\n\n${table}`);
if (ort?.skipped) console.log(`\nORT skipped: ${ort.skipped}`);
if (partial) log("a partial run (EMBED_VARIANTS or EMBED_MRR=0): no file written");
else {
  writeFileSync(join(BENCH, "EMBED.md"), md);
  // models/README.md: the table between its two markers, the rest of the file as it is.
  const readme = join(ROOT, "models", "README.md");
  const [begin, end] = ["<!-- variants:begin -->", "<!-- variants:end -->"];
  const text = readFileSync(readme, "utf8");
  const [i, j] = [text.indexOf(begin), text.indexOf(end)];
  if (i < 0 || j < i) throw new Error(`models/README.md lacks the ${begin} … ${end} markers`);
  writeFileSync(
    readme,
    `${text.slice(0, i + begin.length)}\n${generated}\n\n${variantTable}\n\n${variantNotes}\n${text.slice(j)}`,
  );
  log("bench/EMBED.md and the table in models/README.md written");
  // bench/REPORT.md shows EMBED.md in its Embeddings subsection: put the new one there
  if (mergeEmbedReport()) log("bench/REPORT.md: its Embeddings subsection is the new EMBED.md");
}
