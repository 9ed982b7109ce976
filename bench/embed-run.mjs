#!/usr/bin/env node
// `make bench-embed`: the embedder's speed and memory, each runtime in its own process, written
// to bench/EMBED.md. Every figure in that file comes from this run's output:
//   wasm     node bench/embed-bench.mjs wasm     (tract wasm SIMD, npm-embed/pkg-embed, no worker)
//   worker   node bench/embed-bench.mjs worker   (createEmbedder: the packaged worker path)
//   native   cargo bench --features embed --bench embed_native (tract native, release profile)
//   ort      node bench/embed-bench.mjs ort      (onnxruntime-node, only if it installs from the
//            npm registry into target/ort; otherwise the file says why it was skipped)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH, "..");
const ORT_VERSION = "1.30.0";
const ORT_DIR = join(ROOT, "target", "ort");
const NATIVE_TARGET = join(ROOT, "target", "embed-native");
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
const loadStart = loadavg()[0];

for (const runtime of ["wasm", "worker"]) {
  log(`${runtime}: node bench/embed-bench.mjs ${runtime}`);
  const r = run(process.execPath, [join(BENCH, "embed-bench.mjs"), runtime]);
  if (!r.ok) throw new Error(`embed-bench ${runtime} failed (${r.status}):\n${r.out.slice(-3000)}`);
  process.stdout.write(r.out);
  rows.push({
    runtime:
      runtime === "wasm"
        ? "tract wasm SIMD (Node, in process, no worker)"
        : "packaged path: `createEmbedder` (wasm SIMD in a worker thread)",
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
  log("native: cargo bench --features embed --bench embed_native (release profile)");
  const r = run("cargo", [
    "bench",
    "--features",
    "embed",
    "--bench",
    "embed_native",
    "--target-dir",
    NATIVE_TARGET,
  ]);
  if (!r.ok) throw new Error(`native bench failed (${r.status}):\n${r.out.slice(-3000)}`);
  const lines = r.out.split("\n").filter((l) => l.startsWith("native"));
  console.log(lines.join("\n"));
  rows.push({
    runtime: "tract native (`cargo bench`, release profile)",
    ...parse(lines.join("\n")),
  });
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
    const r = run(process.execPath, [join(BENCH, "embed-bench.mjs"), "ort"], { ORT: mod });
    if (!r.ok)
      ort = { skipped: `installed, but the bench failed (exit ${r.status}): ${lastLine(r.out)}` };
    else {
      process.stdout.write(r.out);
      rows.push({
        runtime: `onnxruntime-node ${ORT_VERSION}, one thread (token ids given, no tokenizer)`,
        ...parse(r.out),
      });
      ort = { ok: true };
    }
  }
  if (ort.skipped) log(`ORT skipped: ${ort.skipped}`);
}

function lastLine(text) {
  const ls = text
    .trim()
    .split("\n")
    .filter((l) => l.trim());
  return (ls.at(-1) ?? "").slice(0, 300).replace(/\|/g, "\\|");
}

// the table: one column per (tokens, batch) seen in the output
const keys = [...new Set(rows.flatMap((r) => Object.keys(r.cells)))].sort((a, b) => {
  const [ta, ba] = a.split("/").map(Number);
  const [tb, bb] = b.split("/").map(Number);
  return ta - tb || ba - bb;
});
const fmt = (x) => (x == null ? "–" : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const cell = (c) => (c ? `${fmt(c.wall)}${c.cpu != null ? ` (${fmt(c.cpu)})` : ""}` : "–");
const secs = (ms) => (ms == null ? null : `${(ms / 1000).toFixed(2)} s`);
const table = [
  `| runtime | ${keys.map((k) => `${k.split("/")[0]} tok b${k.split("/")[1]}`).join(" | ")} | model load | peak RSS |`,
  `|---|${keys.map(() => "---").join("|")}|---|---|`,
  ...rows.map(
    (r) =>
      `| ${r.runtime} | ${keys.map((k) => cell(r.cells[k])).join(" | ")} | ${
        r.readyMs != null
          ? `ready ${secs(r.readyMs)} (load in the worker ${secs(r.workerLoadMs)})`
          : `${secs(r.loadMs) ?? "–"}${r.compileMs ? ` (+${secs(r.compileMs)} compile)` : ""}`
      } | ${r.rssMB != null ? `${r.rssMB} MB` : "–"} |`,
  ),
].join("\n");

const wasm = readFileSync(join(ROOT, "npm-embed", "pkg-embed", "smarter_compact_bg.wasm"));
const model = statSync(join(ROOT, "models", "out", "minilm-l6-v2.onnx")).size;
const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
const machine = `${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GB, ${process.platform} ${process.arch}; Node ${process.version}, ${version("rustc", ["--version"]) ?? "rustc ?"}, tract-onnx ${lockVersion("tract-onnx")}, tokenizers ${lockVersion("tokenizers")}. Load average (1 min) ${loadStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end, on ${cpus().length} cores.`;

const md = `# Embedder speed and memory (all-MiniLM-L6-v2 f32, \`models/out/minilm-l6-v2.onnx\`)

Generated by \`make bench-embed\` (\`node bench/embed-run.mjs\`) on ${new Date().toISOString().slice(0, 10)}: ${machine}

Each runtime in its own process (so the peak RSS is its own), one thread. Texts of exactly the token counts in the header (\`[CLS]\`/\`[SEP]\` included), runs of real session words that are single WordPiece tokens; ms per text, the median of the timed runs after a warm-up run (\`bench/embed-bench.mjs\`, \`bench/embed_native.rs\`), wall time with the process's (native: the thread's) CPU time in parentheses where measured. "b1": one text per call; "bN": N texts per \`embed()\` call (the embedder's planner decides how it batches them; onnxruntime gets one plain padded batch). Peak RSS: the whole process (\`process.resourceUsage().maxRSS\`; native: \`VmHWM\`), the model file's bytes included.

${table}

${nativeSkipped ? `tract native skipped: ${nativeSkipped} (\`make bench-embed\` runs it).\n\n` : ""}${ort?.skipped ? `onnxruntime-node ${ORT_VERSION} skipped: ${ort.skipped}` : `onnxruntime-node ${ORT_VERSION} was installed from the npm registry into \`target/ort\` with \`--ignore-scripts\` (nothing downloaded from elsewhere); its figures exclude tokenization, the wasm and native ones include it.`}

Sizes: \`npm-embed/pkg-embed/smarter_compact_bg.wasm\` ${mb(wasm.length)} raw, ${mb(gzipSync(wasm, { level: 9 }).length)} gzip -9; the model file ${mb(model)}.

Reproduce: \`make bench-embed\` (needs \`make build-embed\`; the native bench builds in \`target/embed-native\`). One runtime by hand: \`node bench/embed-bench.mjs wasm|worker\`, \`ORT=target/ort/node_modules/onnxruntime-node node bench/embed-bench.mjs ort\`, \`cargo bench --features embed --bench embed_native\`.
`;

writeFileSync(join(BENCH, "EMBED.md"), md);
log(`bench/EMBED.md written`);
console.log(`\n${table}`);
if (ort?.skipped) console.log(`\nORT skipped: ${ort.skipped}`);
