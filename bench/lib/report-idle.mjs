// The idle phase's section of REPORT.md and mechanism-tables.md (cache-cold cuts on vs off), and
// the merge that puts it into an existing report when the idle phase runs alone.
import { f2, fmtS, pctf, plural, table, taskLabel, tok, usd } from "./format.mjs";
import { IDLE_VARIANTS } from "./idle.mjs";
import { mergeSection, spliceSection } from "./report-merge.mjs";
import { bootstrap, mean } from "./stats.mjs";

/** The section's markers: the merge replaces what lies between them. */
export const IDLE_BEGIN = "<!-- idle phase: begin -->";
export const IDLE_END = "<!-- idle phase: end -->";
/** The section's heading (its anchor is linked from the report's contents line). */
export const IDLE_HEADING = "## Idle gaps: cache-cold cuts";
const min = (ms) => `${+(ms / 60_000).toFixed(1)} min`;
const sec = (ms) => `${+(ms / 1000).toFixed(1)} s`;

/** Per task and variant: the trials and their means. */
function groups(idle) {
  const out = new Map();
  for (const t of idle.trials) {
    const k = `${t.task}|${t.variant}`;
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(t);
  }
  return out;
}

function means(ts) {
  const sum = (f) => ts.reduce((s, t) => s + f(t), 0);
  const long = ts.flatMap((t) => t.longGapRequests);
  return {
    n: ts.length,
    score: mean(ts.map((t) => t.score)),
    tokens: mean(ts.map((t) => t.totals.tokens)),
    read: mean(ts.map((t) => t.totals.read)),
    write: mean(ts.map((t) => t.totals.write)),
    hit: sum((t) => t.totals.read) / sum((t) => t.totals.tokens),
    cost: Object.fromEntries(
      Object.keys(ts[0].cost).map((p) => [p, mean(ts.map((t) => t.cost[p]))]),
    ),
    trims: mean(ts.map((t) => t.trims)),
    cold: mean(ts.map((t) => t.coldCuts)),
    recalls: mean(ts.map((t) => t.recalls)),
    longGaps: mean(ts.map((t) => t.longGaps)),
    requests: mean(ts.map((t) => t.totals.requests)),
    longAbove: long.filter((r) => r.aboveTrimTo).length,
    longAboveCut: long.filter((r) => r.aboveTrimTo && r.cold).length,
    longAll: long.length,
    failOpens: sum((t) => t.failOpens),
  };
}

/** The variants' figures per task, and over all tasks (one trial of each task per seed). */
function figures(idle) {
  const g = groups(idle);
  const rows = [];
  for (const spec of idle.config.tasks)
    for (const v of IDLE_VARIANTS)
      rows.push({ task: spec.id, v, m: means(g.get(`${spec.id}|${v}`)) });
  const bySeed = (v) =>
    idle.config.seeds.map((seed) => idle.trials.filter((t) => t.variant === v && t.seed === seed));
  const total = {};
  for (const v of IDLE_VARIANTS) {
    const sets = bySeed(v);
    const per = (f) => mean(sets.map((ts) => ts.reduce((s, t) => s + f(t), 0)));
    const m = means(idle.trials.filter((t) => t.variant === v));
    total[v] = {
      ...m,
      score: mean(idle.trials.filter((t) => t.variant === v).map((t) => t.score)),
      tokens: per((t) => t.totals.tokens),
      read: per((t) => t.totals.read),
      write: per((t) => t.totals.write),
      cost: Object.fromEntries(Object.keys(m.cost).map((p) => [p, per((t) => t.cost[p])])),
      trims: per((t) => t.trims),
      cold: per((t) => t.coldCuts),
      recalls: per((t) => t.recalls),
      longGaps: per((t) => t.longGaps),
      requests: per((t) => t.totals.requests),
    };
  }
  return { rows, total };
}

/** Paired by seed, on against off: the score difference and the cost ratio per price model. */
function paired(idle, task, prices) {
  const pairs = idle.config.seeds
    .map((seed) => {
      const of = (v) =>
        idle.trials.filter(
          (t) => t.variant === v && t.seed === seed && (task == null || t.task === task),
        );
      return [of("on"), of("off")];
    })
    .filter(([a, b]) => a.length && a.length === b.length);
  const sum = (ts, f) => ts.reduce((s, t) => s + f(t), 0);
  const scoreDiff = pairs.map(
    ([a, b]) => mean(a.map((t) => t.score)) - mean(b.map((t) => t.score)),
  );
  const same = pairs.filter(([a, b]) => a.every((t, i) => t.score === b[i].score)).length;
  const ratios = Object.fromEntries(
    Object.keys(prices).map((p) => {
      const r = pairs.map(([a, b]) => sum(a, (t) => t.cost[p]) / sum(b, (t) => t.cost[p]));
      return [p, { mean: mean(r), ci: bootstrap(r), lo: Math.min(...r), hi: Math.max(...r) }];
    }),
  );
  return { n: pairs.length, same, scoreDiff: mean(scoreDiff), ci: bootstrap(scoreDiff), ratios };
}

const ci = ([a, b], f) => `${f(a)} – ${f(b)}`;

/** The deterministic tables of the idle phase (no timings): the same text in both files. */
export function idleTables(idle, prices) {
  const { rows, total } = figures(idle);
  const pm = Object.entries(prices);
  const head = [
    "Task, size",
    "cache-cold cuts",
    "score",
    "requests",
    "tokens / trial (cache reads)",
    "cache writes",
    "hit",
    ...pm.map(([, p]) => p.label),
    "trims (cache-cold)",
    "recalls",
    "gaps over the TTL",
  ];
  const line = (label, v, m) => [
    label,
    v,
    f2(m.score),
    m.requests.toFixed(1),
    `${tok(m.tokens)} (${tok(m.read)})`,
    tok(m.write),
    pctf(m.hit),
    ...pm.map(([k]) => usd(m.cost[k])),
    `${+m.trims.toFixed(1)} (${+m.cold.toFixed(1)})`,
    +m.recalls.toFixed(1),
    +m.longGaps.toFixed(1),
  ];
  const body = rows.map((r) => line(taskLabel(r.task), r.v, r.m));
  for (const v of IDLE_VARIANTS)
    body.push(line(`**all ${idle.config.tasks.length} tasks** (one trial each)`, v, total[v]));
  const main = table(head, body);

  const dHead = [
    "Task, size",
    "seed pairs",
    "same score (pairs)",
    "score difference, on − off (95% bootstrap)",
    ...pm.map(([, p]) => `cost ratio on ÷ off, ${p.label} (95% bootstrap; min – max)`),
    "hit, on − off",
  ];
  const byTask = new Map(rows.map((r) => [`${r.task}|${r.v}`, r.m]));
  const dRow = (label, task, on, off) => {
    const p = paired(idle, task, prices);
    return [
      label,
      p.n,
      `${p.same} of ${p.n}`,
      `${f2(p.scoreDiff)} (${ci(p.ci, f2)})`,
      ...pm.map(([k]) => {
        const r = p.ratios[k];
        return `${f2(r.mean)} (${ci(r.ci, f2)}; ${f2(r.lo)} – ${f2(r.hi)})`;
      }),
      `${((on.hit - off.hit) * 100).toFixed(1)} points`,
    ];
  };
  const diff = table(dHead, [
    ...idle.config.tasks.map((s) =>
      dRow(taskLabel(s.id), s.id, byTask.get(`${s.id}|on`), byTask.get(`${s.id}|off`)),
    ),
    dRow(`**all ${idle.config.tasks.length} tasks**`, null, total.on, total.off),
  ]);

  const on = total.on;
  const off = total.off;
  const saved = Object.fromEntries(pm.map(([k]) => [k, 1 - on.cost[k] / off.cost[k]]));
  const summary =
    `Over all tasks, cache-cold cuts ${saved.haiku >= 0 ? "cut" : "raise"} the cost per set of trials from ${pm.map(([k, p]) => `${usd(off.cost[k])} to ${usd(on.cost[k])} (${p.label}, ${pctf(Math.abs(saved[k]), 1)} ${saved[k] >= 0 ? "less" : "more"})`).join(" and from ")}, ` +
    `the tokens sent from ${tok(off.tokens)} to ${tok(on.tokens)} and the cache writes from ${tok(off.write)} to ${tok(on.write)}; the cache hit rate goes from ${pctf(off.hit)} to ${pctf(on.hit)}; ` +
    `the mean score is ${f2(on.score)} with the cuts and ${f2(off.score)} without.`;
  const k1 = (x) => `${+(x / 1000).toFixed(1)}k`;
  const coldOf = (v) =>
    idle.trials.filter((t) => t.variant === v).reduce((s, t) => s + t.coldCuts, 0);
  const left = on.longAbove - on.longAboveCut;
  const uncutMax = Math.max(
    0,
    ...idle.trials
      .filter((t) => t.variant === "on")
      .flatMap((t) => t.longGapRequests)
      .filter((r) => r.aboveTrimTo && !r.cold)
      .map((r) => r.engineTokens),
  );
  const guard =
    `Requests that came after a gap over the TTL, all trials with the cuts on: ${on.longAll}; above trim_to (trim_to_fraction × trim_at = ${k1(idle.engine.trimTo)} by the engine's count) ${on.longAbove}, of which ${on.longAboveCut} were cut there (cache-cold cuts in all: ${coldOf("on")}). ` +
    (left > 0
      ? `Left uncut: ${left}, all sent at ${k1(uncutMax)} or less, about trim_to + min_free_fraction × trim_at (${k1(idle.engine.trimTo + idle.engine.minFree)}): the engine makes a cut under trim_at only when it frees at least min_free_fraction × trim_at (${k1(idle.engine.minFree)}), and the in-flight turn's last ${idle.engine.keepLastExchanges} tool exchanges always stay. `
      : "") +
    `With the cuts off: ${off.longAll} such requests, ${coldOf("off")} cache-cold cuts. Fail-opens: ${on.failOpens + off.failOpens}.`;
  return [main, "", diff, "", summary, "", guard].join("\n");
}

/** The idle phase's section of REPORT.md (with the run's time) or of mechanism-tables.md. */
export function idleSection(idle, prices, { timing = null, forTables = false } = {}) {
  const p = idle.params;
  const cfg = idle.config;
  const L = [
    IDLE_BEGIN,
    forTables ? "## Idle gaps: cache-cold cuts (on vs off)" : IDLE_HEADING,
    "",
  ];
  if (!forTables) {
    L.push(
      `The mechanism's tasks (${cfg.tasks.map((t) => taskLabel(t.id)).join(", ")}; ${plural(cfg.seeds.length, "seed")}) with idle gaps on a simulated clock, each driven through the smarter-compact arm twice at the same settings: **cache-cold cuts on** (the engine's default: its cache lifetime for \`${cfg.model}\` is the \`default\` entry of \`[context_proxy.cache_ttl]\`, ${idle.engine.ttlOn} s) and **off** (the same arm with a config.toml in its state directory that says \`${p.offToml.trim().replace(/\n/g, " ")}\`: the engine then resolves that entry to ${idle.engine.ttlOff} s, a lifetime it reads as never cache-cold). ` +
        `**Gaps** (\`bench/lib/idle-params.mjs\`, \`idleGaps()\` in \`bench/lib/tasks.mjs\`, seeded by task and seed, the same for both arms): before each request of the reading a long gap with probability ${p.longInLoop} (a prompt waiting for the user), before each question with probability ${p.longBeforeQuestion} (the user comes back later); a long gap is ${min(p.longMs[0])}–${min(p.longMs[1])}, a short one ${sec(p.shortMs[0])}–${sec(p.shortMs[1])} (uniform); the request after a recall tool call follows it by ${sec(p.recallMs)}. ` +
        `**Meter**: as in the mechanism bench, except that the prompt cache expires: a request more than ${min(p.ttlMs)} (the 5-minute TTL of the prices' cache writes) after the request before it reads nothing from the cache and writes its whole prompt (tools, system prompt and messages) at the cache-write price. ` +
        `The engine gets each request's time as \`transform()\`'s \`nowMs\`. Score: the same oracle as the mechanism bench. Trims: all trims, in brackets those made cache-cold (the engine's \`stats.cache_cold\`). Costs and tokens per trial; "all tasks" sums one trial of each task (mean over the seeds).`,
      "",
    );
  }
  L.push(idleTables(idle, prices), "");
  if (!forTables && timing)
    L.push(
      `The idle phase ran in ${fmtS(timing.idle)} on ${timing.idleAt?.slice(0, 10) ?? "?"} (\`node bench/run.mjs --only=idle\` runs it alone and merges this section into the report; the other sections stay as they were).`,
      "",
    );
  L.push(IDLE_END);
  return L.join("\n");
}

/** `text` with the idle section put in: between the markers if there, else before `before`
 * (a heading line), else at the end. */
export function spliceIdle(text, section, before) {
  return spliceSection(text, section, { begin: IDLE_BEGIN, end: IDLE_END, before });
}

/** Puts the idle section into an existing REPORT.md and mechanism-tables.md (the idle phase
 * run alone). `header(report, hash, previous)` rewrites REPORT.md's paragraph on the tables'
 * hash and its contents line. Returns the tables' path, new hash and the hash before. */
export function mergeIdle({ reportDir, idle, prices, timing, tablesFile, sha256, header }) {
  return mergeSection({
    reportDir,
    tablesFile,
    sha256,
    header,
    markers: { begin: IDLE_BEGIN, end: IDLE_END },
    report: { section: idleSection(idle, prices, { timing }), before: "## Real sessions" },
    tables: {
      section: idleSection(idle, prices, { forTables: true }),
      before: "## Real-model mode, offline check",
    },
  });
}
