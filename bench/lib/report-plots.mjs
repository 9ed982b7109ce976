// The report's SVG plots: prompt tokens per request over one trial, score vs tokens per arm, and
// the hook's time per request vs session length.
import { armLabel, firstTierBound, plural, size, taskLabel, tok } from "./format.mjs";
import { COLORS, lineChart, scatterChart } from "./svg.mjs";

export function tokensPlot(mech, taskId, config) {
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
  for (const arm of config.armOrder) {
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
    const wide = config.arms[arm]?.window > config.window;
    series.push({
      name: armLabel(arm, config),
      color: COLORS[arm],
      points: rows.map(([t], i) => [i + 1, t / 1000]),
      markers,
      dash: wide ? "5 3" : undefined,
      width: arm === "smarter-compact" ? 2.6 : 1.8,
      z: wide ? -1 : arm === "smarter-compact" ? 1 : 0,
    });
  }
  for (const e of seen)
    extra.push({ name: marks[e][1], color: COLORS[marks[e][2]], marker: marks[e][0], line: false });
  const refs = [
    { y: config.window / 1000, label: `${size(config.window)} context window`, color: "#1f77b4" },
  ];
  for (const p of Object.values(config.prices.models)) {
    const bound = firstTierBound(p);
    if (bound)
      refs.push({
        y: bound / 1000,
        label: `${size(bound)}: ${p.label} long-prompt price tier starts`,
        color: "#8c564b",
        dash: "2 3",
      });
  }
  const wideArms = config.armOrder.filter((a) => config.arms[a]?.window > config.window);
  return lineChart({
    title: `Prompt tokens per request over one session: ${taskLabel(taskId)} (seed ${config.seeds[0]})`,
    subtitle: `Every request of the trial (data pages, then questions), o200k tokens of the serialised request; ${size(config.window)} window on all arms${wideArms.length ? ` but ${wideArms.map((a) => armLabel(a, config)).join(", ")} (dashed)` : ""}`,
    x: { label: "request number in the session", format: (v) => String(v) },
    y: { label: "prompt tokens per request (thousands, o200k)", min: 0, format: (v) => `${v}k` },
    series,
    refs,
    extraLegend: extra,
    legendWidth: 250,
  });
}

export function scorePlot(agg, config) {
  const shapes = ["circle", "square", "triangle", "diamond", "x"];
  const tasks = config.tasks.map((t) => t.id);
  const groups = config.armOrder.map((arm) => ({
    name: armLabel(arm, config),
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
    subtitle: `Oracle agent, mean over ${plural(config.seeds.length, "seed")}; lines join one arm's log-triage sizes; up-left is better`,
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

export function latencyPlot(speed, { newPerRequest }) {
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
    subtitle: `transform() of a request with ${newPerRequest} new messages, ${h[0]?.backend ?? ""} under Node ${speed.runtimes?.node20 ?? ""}; measured in one run, same process`,
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
