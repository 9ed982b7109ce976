// The mechanism bench's embedder comparison: the smarter-compact arm with no embedder against the
// same arm in the default configuration (the embedder on, embedding each session in the
// background while the trial goes on), and, when run, that arm with the backlog embedded before
// the questions; per task: scores trial by trial, how the searches were answered, and their wall
// time. Timings: REPORT.md only, never the deterministic tables.
import { EMBEDDER_ARM, SETTLED_ARM } from "./arms.mjs";
import { mean, quantile } from "./stats.mjs";
import { f2, ms, table, taskLabel } from "./format.mjs";

const OFF_ARM = "smarter-compact";
const MODES = { hybrid: "hybrid", fts: "full-text", "fts-busy": "full-text (embedder busy)" };

/** Search wall times and modes of some trials: `{n, p50, p95, modes}`. */
function searchStats(trials, only = null) {
  const all = trials.flatMap((t) => t.armStats?.searches ?? []);
  const picked = only ? all.filter(([, m]) => m === only) : all;
  const modes = {};
  for (const [, m] of all) modes[m] = (modes[m] ?? 0) + 1;
  const times = picked.map(([t]) => t);
  return {
    n: times.length,
    p50: times.length ? quantile(times, 0.5) : null,
    p95: times.length ? quantile(times, 0.95) : null,
    modes,
  };
}

const latency = (s) => (s.n ? `${ms(s.p50)} / ${ms(s.p95)} (n = ${s.n})` : "–");
const modesText = (modes) =>
  Object.entries(modes)
    .map(([m, n]) => `${MODES[m] ?? m} ${n}`)
    .join(", ") || "–";

/** The rows of the comparison, one per task, and the totals: deterministic parts and timings. */
export function embedderRows(mech, config) {
  const of = (arm) =>
    (arm === OFF_ARM ? mech.trials : (mech.embedder?.trials ?? [])).filter((t) => t.arm === arm);
  return config.tasks.map((spec) => {
    const [a, b, c] = [OFF_ARM, EMBEDDER_ARM, SETTLED_ARM].map((arm) =>
      of(arm).filter((t) => t.task === spec.id),
    );
    const bySeed = new Map(a.map((t) => [t.seed, t.score]));
    const same = (ts) => ts.filter((t) => bySeed.get(t.seed) === t.score).length;
    return {
      task: spec.id,
      offScore: mean(a.map((t) => t.score)),
      onScore: mean(b.map((t) => t.score)),
      settledScore: c.length ? mean(c.map((t) => t.score)) : null,
      same: same(b),
      sameSettled: same(c),
      trials: b.length,
      settledTrials: c.length,
      off: searchStats(a),
      on: searchStats(b),
      settled: searchStats(c),
    };
  });
}

/** REPORT.md's section: the table and the embedder's memory and priority. */
export function embedderSection(mech, config) {
  if (!mech?.embedder) {
    return "The embedder-on arm did not run: the embedding model is not installed (or `--no-embedder` was given).";
  }
  const rows = embedderRows(mech, config);
  const e = mech.embedder;
  const withSettled = rows.some((r) => r.settledTrials > 0);
  const pick = (arm) => (arm === OFF_ARM ? mech.trials : e.trials).filter((t) => t.arm === arm);
  const busyAll = searchStats(pick(EMBEDDER_ARM), "fts-busy");
  const hybridAll = searchStats([...pick(EMBEDDER_ARM), ...pick(SETTLED_ARM)], "hybrid");
  const head = [
    "Task",
    "score off",
    "score on",
    "same score",
    "search off p50 / p95",
    "search on p50 / p95",
    "on: answered by",
  ];
  if (withSettled)
    head.push(
      "score on, settled",
      "same score",
      "search settled p50 / p95",
      "settled: answered by",
    );
  return [
    `The smarter-compact arm run on every task and seed with no embedder (\`embedder: false\`, the arm above) and in the default configuration (the process-wide embedder, ${e.model}, embedding each session's chunks in the background at nice ${e.nice ?? "(not set)"} while the trial goes on, paused while a request is in flight; the trial's requests follow each other with no pause, so the backlog is still being embedded when the questions come)${withSettled ? `, and again in the default configuration waiting after each request until the background embedding of what it stored is done ("settled": a model slower to answer than the embedder; \`--embedder-settled\`, on by default with \`--quick\`)` : ""}. Score: mean over the seeds, and in how many trials the arm scored the same as with no embedder. Search: the wall time of each \`smart_compact_search\` the oracle made (through \`runTool\`, as a host runs it), p50 / p95 in ms, and how the searches were answered (hybrid when the worker was free and vectors existed, full-text at once while the worker was computing the backlog).`,
    "",
    table(
      head,
      rows.map((r) => [
        taskLabel(r.task),
        f2(r.offScore),
        f2(r.onScore),
        `${r.same} of ${r.trials}`,
        latency(r.off),
        latency(r.on),
        modesText(r.on.modes),
        ...(withSettled
          ? [
              f2(r.settledScore),
              `${r.sameSettled} of ${r.settledTrials}`,
              latency(r.settled),
              modesText(r.settled.modes),
            ]
          : []),
      ]),
    ),
    "",
    `All tasks: search off ${latency(searchStats(pick(OFF_ARM)))}, on ${latency(searchStats(pick(EMBEDDER_ARM)))}; answered from full-text while the embedder was busy: ${latency(busyAll)} (goal: p95 ≤ 50 ms); answered hybrid: ${latency(hybridAll)}. Embedder memory: its worker's wasm linear memory peaked at ${e.wasmPeakMB.toFixed(0)} MiB (goal ≤ 300 MB); the bench process's RSS was ${e.rssBeforeMB.toFixed(0)} MiB before the embedder started, ${e.rssLoadedMB.toFixed(0)} MiB once it had loaded, ${e.peakRssMB.toFixed(0)} MiB at its peak after a trial (the worker shares the process).`,
  ].join("\n");
}
