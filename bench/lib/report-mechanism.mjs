// The mechanism bench's tables: per task × arm aggregates over seeds, the headline (against the
// baseline arm), the README snippet, scores, tokens / cache / cost, pairs by seed, and where
// smarter-compact is behind. Every figure here is deterministic (no timings) unless `timings`.
import { BOOTSTRAP_Q, bootstrap, mean } from "./stats.mjs";
import {
  armLabel,
  f1,
  f2,
  firstTierBound,
  pctf,
  plural,
  shortTask,
  size,
  table,
  taskLabel,
  tierLabel,
  tok,
  usd,
  ms,
} from "./format.mjs";

/** Per task × arm aggregate over seeds. */
export function aggregate(trials) {
  const groups = new Map();
  for (const t of trials) {
    const k = `${t.task}|${t.arm}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(t);
  }
  const agg = new Map();
  for (const [k, ts] of groups) {
    const sum = (f) => ts.reduce((s, t) => s + f(t), 0);
    const ev = (name) => mean(ts.map((t) => t.events[name] ?? 0));
    agg.set(k, {
      n: ts.length,
      trials: ts,
      score: mean(ts.map((t) => t.score)),
      lookup: ts[0].lookup == null ? null : mean(ts.map((t) => t.lookup)),
      count: ts[0].count == null ? null : mean(ts.map((t) => t.count)),
      tokens: mean(ts.map((t) => t.totals.tokens)),
      read: mean(ts.map((t) => t.totals.read)),
      write: mean(ts.map((t) => t.totals.write)),
      hit: sum((t) => t.totals.read) / sum((t) => t.totals.tokens),
      peak: Math.max(...ts.map((t) => t.totals.peak)),
      requests: mean(ts.map((t) => t.totals.requests)),
      out: mean(ts.map((t) => t.totals.out)),
      cost: Object.fromEntries(
        Object.keys(ts[0].cost).map((p) => [p, mean(ts.map((t) => t.cost[p]))]),
      ),
      windowDrops: mean(ts.map((t) => t.windowDrops)),
      trims: ev("trim"),
      compressed: mean(ts.map((t) => t.armStats?.compressed ?? 0)),
      compactions: ev("compact"),
      prunes: ev("prune"),
      clears: ev("clear"),
      repairs: mean(ts.map((t) => t.armStats?.repairs ?? 0)),
      recalls: mean(ts.map((t) => t.recalls)),
      failOpens: sum((t) => t.armStats?.failOpens ?? 0),
      fixed: mean(ts.map((t) => t.fixed ?? 0)),
      hookMax: Math.max(...ts.map((t) => t.hook.max)),
      hookP50: mean(ts.map((t) => t.hook.p50)),
      hookP95: mean(ts.map((t) => t.hook.p95)),
    });
  }
  return agg;
}

/** The arms in headline order: the compacting arms, then the baseline, then the other keeps. */
export function headArms(config) {
  const base = config.baseline;
  const keeps = (a) => a === "keep" || a.startsWith("keep-");
  return [
    ...config.armOrder.filter((a) => a !== base && !keeps(a)),
    base,
    ...config.armOrder.filter((a) => a !== base && keeps(a)),
  ];
}

const priceKeys = (config) => Object.keys(config.prices.models);
const priceName = (config, k) =>
  `${config.prices.models[k].label}, ${tierLabel(config.prices.models[k])}`;
const armHead = (config, arm) =>
  arm === config.baseline ? `${armLabel(arm, config)} — baseline` : armLabel(arm, config);

/** The headline: rows task × measure, one column per arm, the baseline's next to the other keep. */
export function headline(agg, config) {
  const arms = headArms(config);
  const base = config.baseline;
  const rows = [];
  for (const t of config.tasks.map((x) => x.id)) {
    const get = (arm) => agg.get(`${t}|${arm}`);
    const b = get(base);
    const measures = [
      ["score", (a) => f2(a.score)],
      ["tokens per trial (cache reads)", (a) => `${tok(a.tokens)} (${tok(a.read)})`],
      ["prompt-cache hit rate", (a) => pctf(a.hit)],
      ["peak prompt", (a) => tok(a.peak)],
      ...priceKeys(config).map((k) => [
        `cost per trial, ${priceName(config, k)}`,
        (a) => usd(a.cost[k]),
      ]),
      [
        `cost ÷ baseline, ${priceKeys(config)
          .map((k) => config.prices.models[k].label)
          .join(" · ")}`,
        (a) =>
          priceKeys(config)
            .map((k) => f2(a.cost[k] / b.cost[k]))
            .join(" · "),
      ],
    ];
    measures.forEach(([name, f], i) =>
      rows.push([
        i === 0 ? `**${taskLabel(t)}**` : "",
        name,
        ...arms.map((arm) => (get(arm) ? f(get(arm)) : "–")),
      ]),
    );
  }
  return table(["Task, size", "measure", ...arms.map((a) => armHead(config, a))], rows);
}

/** The README snippet: score and the cost under each price model, per task and arm. */
export function readmeSnippet(agg, config, command) {
  const arms = headArms(config);
  const rows = [];
  for (const t of config.tasks.map((x) => x.id)) {
    const get = (arm) => agg.get(`${t}|${arm}`);
    const measures = [
      ["score", (a) => f2(a.score)],
      ...priceKeys(config).map((k) => [
        `$/trial, ${config.prices.models[k].label} (${tierLabel(config.prices.models[k]).replace(/ \(.*\)$/, "")})`,
        (a) => usd(a.cost[k]),
      ]),
    ];
    measures.forEach(([name, f], i) =>
      rows.push([i === 0 ? shortTask(t) : "", name, ...arms.map((arm) => f(get(arm)))]),
    );
  }
  return [
    `Mechanism bench (\`${command}\`; oracle agent, ${plural(config.seeds.length, "seed")}; baseline: ${armLabel(config.baseline, config)}; list prices ${config.prices.asOf}, inputs of bench/config.json; details in [bench/REPORT.md](bench/REPORT.md)):`,
    "",
    table(["task", "measure", ...arms.map((a) => armHead(config, a))], rows),
  ].join("\n");
}

/** Score by arm, lookup and count separately. */
export function scoreTable(agg, config) {
  const arms = config.armOrder;
  return table(
    ["Task, size", ...arms.map((a) => armLabel(a, config))],
    config.tasks.map((t) => [
      taskLabel(t.id),
      ...arms.map((arm) => {
        const a = agg.get(`${t.id}|${arm}`);
        return a
          ? `${f2(a.score)} (lookup ${f2(a.lookup)}${a.count != null ? `, count ${f2(a.count)}` : ""}), n = ${a.n}`
          : "–";
      }),
    ]),
  );
}

export function questionsLine(config) {
  return `Questions per trial: ${config.tasks
    .map(
      (t) =>
        `${taskLabel(t.id)} ${Object.entries(t.questions)
          .map(([k, v]) => `${v} ${k}`)
          .join(" + ")}`,
    )
    .join(
      "; ",
    )}. Score = mean of the lookup and count accuracies (a task without count questions: its lookup accuracy).`;
}

function eventsOf(a, arm) {
  if (arm === "smarter-compact")
    return `${f1(a.trims)} trims, ${f1(a.compressed)} outputs compressed, ${f1(a.recalls)} recalls`;
  if (arm === "compact_context")
    return `${f1(a.compactions)} compactions, ${f1(a.repairs)} pair repairs`;
  if (arm === "opencode-prune") return `${f1(a.prunes)} prunes`;
  if (arm === "clear_tool_uses") return `cleared on ${f1(a.clears)} requests`;
  return "";
}

/** Tokens, cache and cost by arm; with `timings`, the arm's own time per request too. */
export function costTable(agg, config, { timings }) {
  const rows = [];
  for (const t of config.tasks) {
    for (const arm of config.armOrder) {
      const a = agg.get(`${t.id}|${arm}`);
      if (!a) continue;
      const row = [
        taskLabel(t.id),
        armLabel(arm, config),
        f1(Math.round(a.requests)),
        tok(a.tokens),
        tok(a.read),
        tok(a.write),
        pctf(a.hit),
        tok(a.peak),
        ...priceKeys(config).map((k) => usd(a.cost[k])),
        a.windowDrops ? f1(a.windowDrops) : "0",
        eventsOf(a, arm),
      ];
      if (timings)
        row.push(
          arm === "smarter-compact" || arm === "compact_context"
            ? `${ms(a.hookP50)} / ${ms(a.hookP95)} / ${ms(a.hookMax)}`
            : "–",
        );
      rows.push(row);
    }
  }
  return table(
    [
      "Task, size",
      "arm",
      "requests",
      "tokens / trial",
      "cache reads",
      "cache writes",
      "hit",
      "peak",
      ...priceKeys(config).map((k) => config.prices.models[k].label),
      "requests over the window",
      "events per trial",
      ...(timings ? ["arm's own time per request, ms p50 / p95 / max"] : []),
    ],
    rows,
  );
}

/** The token-count check and the fail-opens, one line each. */
export function checkLines(trials, config) {
  const L = [];
  const checks = trials.filter((x) => x.check);
  if (checks.length) {
    const rel = checks.map((x) => Math.abs(x.check.diff) / x.check.whole);
    L.push(
      `Token-count check: the tables sum per-message counts; encoding the peak request of each seed-${config.seeds[0]} trial whole (${checks.length} requests, up to ${tok(Math.max(...checks.map((x) => x.check.whole)))} tokens) differs from the sum by at most ${(Math.max(...rel) * 100).toFixed(2)}% (mean ${(mean(rel) * 100).toFixed(3)}%).`,
    );
  }
  const fo = trials.reduce((s, x) => s + (x.armStats?.failOpens ?? 0), 0);
  L.push(`smarter-compact fail-opens over all trials: ${fo}.`);
  return L;
}

const level = () => `${((BOOTSTRAP_Q[1] - BOOTSTRAP_Q[0]) * 100).toFixed(0)}% bootstrap`;

/** Paired by seed: score difference and cost ratio of smarter-compact against each arm. */
export function pairedTable(agg, config) {
  const rows = [];
  const keys = priceKeys(config);
  for (const t of config.tasks.map((x) => x.id)) {
    const sc = agg.get(`${t}|smarter-compact`);
    for (const arm of config.armOrder) {
      if (arm === "smarter-compact") continue;
      const a = agg.get(`${t}|${arm}`);
      if (!a) continue;
      const diffs = [];
      const costR = Object.fromEntries(keys.map((k) => [k, []]));
      for (const x of sc.trials) {
        const y = a.trials.find((z) => z.seed === x.seed);
        if (!y) continue;
        diffs.push(x.score - y.score);
        for (const k of keys) costR[k].push(x.cost[k] / y.cost[k]);
      }
      const ci = bootstrap(diffs, 7);
      rows.push([
        taskLabel(t),
        armLabel(arm, config),
        `${diffs.length}`,
        `${f2(mean(diffs))} (${f2(ci[0])} – ${f2(ci[1])})`,
        ...keys.map((k, i) => {
          const cr = bootstrap(costR[k], 11 + i);
          return `${f2(mean(costR[k]))} (${f2(cr[0])} – ${f2(cr[1])})`;
        }),
      ]);
    }
  }
  return table(
    [
      "Task, size",
      "vs arm",
      "seed pairs",
      `score difference, smarter-compact − arm (${level()})`,
      ...keys.map(
        (k) => `cost ratio smarter-compact ÷ arm, ${config.prices.models[k].label} (${level()})`,
      ),
    ],
    rows,
  );
}

/** Where smarter-compact is behind another arm, with the numbers that explain it. */
export function behindRows(agg, config, facts) {
  const out = [];
  const trimAt = facts.engine.trimAt[config.model];
  const prune = config.arms["opencode-prune"];
  for (const t of config.tasks.map((x) => x.id)) {
    const sc = agg.get(`${t}|smarter-compact`);
    for (const arm of config.armOrder) {
      if (arm === "smarter-compact") continue;
      const a = agg.get(`${t}|${arm}`);
      if (!a) continue;
      const label = armLabel(arm, config);
      const toolTok = sc.fixed - a.fixed;
      if (a.score > sc.score + 0.005)
        out.push([
          taskLabel(t),
          "score",
          label,
          `${f2(a.score)} vs ${f2(sc.score)}`,
          `wrong answers of smarter-compact: ${sc.trials
            .flatMap((x) => x.wrong)
            .slice(0, 3)
            .map((w) => `${w.kind} ${w.key} (answered ${w.answer ?? "nothing"}, from ${w.from})`)
            .join("; ")}`,
        ]);
      for (const key of priceKeys(config)) {
        const price = config.prices.models[key];
        if (!(a.cost[key] < sc.cost[key] * 0.99)) continue;
        const why = [
          `tokens per trial ${tok(sc.tokens)} vs ${tok(a.tokens)}`,
          `cache hit ${pctf(sc.hit)} vs ${pctf(a.hit)}`,
        ];
        if (sc.requests > a.requests)
          why.push(`${f1(sc.requests - a.requests)} more requests (its recall round trips)`);
        if (toolTok > 0)
          why.push(
            `+${tok(toolTok)} tokens of recall-tool definitions and standing instruction on each of its ${f1(Math.round(sc.requests))} requests (${tok(toolTok * sc.requests)} per trial)`,
          );
        if (sc.trims)
          why.push(`${f1(sc.trims)} trims, each re-writing the cache after the task turn`);
        const bound = firstTierBound(price);
        if (bound && a.peak <= bound && sc.peak <= bound)
          why.push(`both stay in the first price tier (prompts ≤ ${size(bound)})`);
        out.push([
          taskLabel(t),
          `cost, ${price.label}`,
          label,
          `${usd(a.cost[key])} vs ${usd(sc.cost[key])} (${((sc.cost[key] / a.cost[key] - 1) * 100).toFixed(0)}% more)`,
          why.join("; "),
        ]);
      }
      if (a.hit > sc.hit + 0.01) {
        const why =
          sc.write <= a.write * 1.1
            ? `both write about the same to the cache (${tok(sc.write)} vs ${tok(a.write)} per trial, smarter-compact's ${f1(sc.trims)} trims included); smarter-compact's requests are smaller (${tok(sc.tokens)} vs ${tok(a.tokens)} per trial), so the writes are a larger share`
            : `cache writes per trial ${tok(sc.write)} vs ${tok(a.write)}: ${f1(sc.trims)} trims and ${f1(sc.recalls)} recall round trips`;
        out.push([taskLabel(t), "cache hit rate", label, `${pctf(a.hit)} vs ${pctf(sc.hit)}`, why]);
      }
      if (a.peak < sc.peak * 0.95 && arm !== config.baseline)
        out.push([
          taskLabel(t),
          "peak prompt",
          label,
          `${tok(a.peak)} vs ${tok(sc.peak)}`,
          `smarter-compact lets the request grow to trim_at (${size(trimAt)} by the engine's estimate for ${config.model}; ${tok(sc.peak)} o200k on the serialised request) before it trims; ${arm === "opencode-prune" ? `prune protects only the newest ${size(prune.protect)} tokens of tool output and clears older output once at least ${size(prune.minimum)} can be freed` : "this arm cuts earlier or deeper"}`,
        ]);
    }
  }
  return out;
}

export function behindTable(rows) {
  return rows.length
    ? table(
        ["Task, size", "metric", "better arm", "arm vs smarter-compact", "from the numbers"],
        rows,
      )
    : `No arm beats smarter-compact on score, cost, cache hit rate or peak in this run.`;
}

/** Scores of the offline check of real-model mode (deterministic: a scripted endpoint). */
export function mockTable(mock, config) {
  return table(
    ["task", "seed", "arm", "score", "lookup", "count"],
    mock.trials.map((t) => [
      taskLabel(t.task),
      String(t.seed),
      armLabel(t.arm, config),
      f2(t.score),
      f2(t.lookup),
      f2(t.count),
    ]),
  );
}

/** The test-log task: per size, each arm's score (the share of trials that named the failing
 * tests), with how many of smarter-compact's trials recalled (smart_compact_get with grep) and
 * the output's size at the first seed. Null when the run has no test-log task. */
export function testlogTable(agg, config, facts) {
  const tasks = config.tasks.filter((t) => t.kind === "testlog");
  if (!tasks.length) return null;
  const arms = config.armOrder;
  return table(
    ["Task, size", "output at the first seed", ...arms.map((a) => armLabel(a, config))],
    tasks.map((t) => {
      const p = facts?.pages?.[t.id];
      return [
        taskLabel(t.id),
        p?.outputLines ? `${p.outputLines} lines, ${tok(p.outputTokens)} tokens` : "–",
        ...arms.map((arm) => {
          const a = agg.get(`${t.id}|${arm}`);
          if (!a) return "–";
          const recalled = a.trials.filter((x) => x.recalls > 0).length;
          return `${f2(a.score)}${arm === "smarter-compact" ? ` (${recalled} of ${a.n} after a recall)` : ""}`;
        }),
      ];
    }),
  );
}
