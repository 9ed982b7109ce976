// The mechanism bench's embedder comparison: the smarter-compact arm with no embedder against the
// same arm in the default configuration (the embedder on, embedding each session in the
// background while the trial goes on), per task: scores trial by trial, how the searches were
// answered, and their wall time. Timings: REPORT.md only, never the deterministic tables.
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
  const off = mech.trials.filter((t) => t.arm === OFF_ARM);
  const on = mech.embedder?.trials ?? [];
  return config.tasks.map((spec) => {
    const a = off.filter((t) => t.task === spec.id);
    const b = on.filter((t) => t.task === spec.id);
    const bySeed = new Map(a.map((t) => [t.seed, t.score]));
    const same = b.filter((t) => bySeed.get(t.seed) === t.score).length;
    return {
      task: spec.id,
      offScore: mean(a.map((t) => t.score)),
      onScore: mean(b.map((t) => t.score)),
      same,
      trials: b.length,
      off: searchStats(a),
      on: searchStats(b),
      busy: searchStats(b, "fts-busy"),
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
  const all = (k) =>
    searchStats(k === "off" ? mech.trials.filter((t) => t.arm === OFF_ARM) : e.trials);
  const busyAll = searchStats(e.trials, "fts-busy");
  return [
    `The smarter-compact arm run twice on every task and seed: with no embedder (\`embedder: false\`, the arm above) and in the default configuration (the process-wide embedder, ${e.model}, embedding each session's chunks in the background at nice ${e.nice ?? "(not set)"} while the trial goes on, paused while a request is in flight). Score: mean over the seeds, and in how many trials the two arms scored the same. Search: the wall time of each \`smart_compact_search\` the oracle made (through \`runTool\`, as a host runs it), p50 / p95 in ms, and how the embedder-on searches were answered (hybrid when the worker was free, full-text when it was computing the backlog).`,
    "",
    table(
      [
        "Task",
        "score off",
        "score on",
        "same score",
        "search off p50 / p95",
        "search on p50 / p95",
        "on: answered by",
      ],
      rows.map((r) => [
        taskLabel(r.task),
        f2(r.offScore),
        f2(r.onScore),
        `${r.same} of ${r.trials}`,
        latency(r.off),
        latency(r.on),
        modesText(r.on.modes),
      ]),
    ),
    "",
    `All tasks: search off ${latency(all("off"))}, on ${latency(all("on"))}; on, while the embedder was busy (answered from full-text at once): ${latency(busyAll)} (goal: p95 ≤ 50 ms). Embedder memory: its worker's wasm linear memory peaked at ${e.wasmPeakMB.toFixed(0)} MiB (goal ≤ 300 MB); the bench process's RSS was ${e.rssBeforeMB.toFixed(0)} MiB before the embedder started, ${e.rssLoadedMB.toFixed(0)} MiB once it had loaded, ${e.peakRssMB.toFixed(0)} MiB at its peak after a trial (the worker shares the process).`,
  ].join("\n");
}
