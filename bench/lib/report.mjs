// REPORT.md, mechanism-tables.md and the SVG plots, from the saved results in bench/out/.
// The sections live in report-*.mjs; the facts their prose states are computed by
// report-facts.mjs (run.mjs passes them in).
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { armLabel, fmtS, load, plural, size, taskLabel, tierLabel } from "./format.mjs";
import {
  aggregate,
  behindRows,
  behindTable,
  checkLines,
  costTable,
  headline,
  mockTable,
  pairedTable,
  questionsLine,
  readmeSnippet,
  scoreTable,
  testlogTable,
} from "./report-mechanism.mjs";
import { embedderSection } from "./report-embedder.mjs";
import { BEHIND_NOTES, methodSection } from "./report-method.mjs";
import { latencyPlot, scorePlot, tokensPlot } from "./report-plots.mjs";
import {
  estimatorTable,
  realModelSection,
  realSessionsSection,
  replayTable,
  requestErrorLine,
} from "./report-real-sessions.mjs";
import { IDLE_BEGIN, IDLE_END, IDLE_HEADING, idleSection, mergeIdle } from "./report-idle.mjs";
import {
  CONTINUITY_BEGIN,
  CONTINUITY_END,
  CONTINUITY_HEADING,
  continuitySection,
} from "./continuity.mjs";
import { mergeSection, provenance, rewriteProvenance, sectionOf } from "./report-merge.mjs";
import { embedDate, speedSection, withEmbedSection } from "./report-speed.mjs";
import { SOAK_BEGIN, SOAK_END } from "./soak-report.mjs";
import { SPEED } from "./speed-params.mjs";

const sha256 = (text) => createHash("sha256").update(text).digest("hex");
export const MECHANISM_TABLES = "mechanism-tables.md";

/** SHA-256 of the mechanism tables in `reportDir`, or null (run.mjs records it before a run). */
export function tablesSha(reportDir) {
  const p = join(reportDir, MECHANISM_TABLES);
  return existsSync(p) ? sha256(readFileSync(p, "utf8")) : null;
}

/** The deterministic figures only (no timings, dates or machine): diff two runs' files. */
function mechanismTables({
  cfg,
  agg,
  mech,
  idle,
  mock,
  rs,
  cont,
  facts,
  command,
  configText,
  old,
}) {
  const keep = (start, end) => {
    const s = sectionOf(old, start, end);
    return s ? [s, ""] : [];
  };
  const L = [
    `# smarter-compact mechanism tables`,
    "",
    `The deterministic figures of \`${command}\`: scores, tokens, cache reads and writes, hit rates, costs, peaks, requests and events; no timings, dates or machine. Two runs with the same inputs should give the same file byte for byte. Inputs: bench/config.json (SHA-256 \`${sha256(configText)}\`), ${plural(cfg.seeds.length, "seed")}, ${plural(cfg.tasks.length, "task")}; the engine's trim_at for \`${cfg.model}\`: ${facts.engine.trimAt[cfg.model]}.`,
    "",
  ];
  if (mech) {
    L.push(`## Headline (baseline: ${cfg.baseline})`, "", headline(agg, cfg), "");
    L.push(`## README snippet`, "", readmeSnippet(agg, cfg, command), "");
    L.push(`## Score by arm`, "", scoreTable(agg, cfg), "", questionsLine(cfg), "");
    const tl = testlogTable(agg, cfg, facts);
    if (tl) L.push(`## Test log: which test failed`, "", tl, "");
    L.push(`## Tokens, cache and cost by arm`, "", costTable(agg, cfg, { timings: false }), "");
    L.push(...checkLines(mech.trials, cfg), "");
    L.push(`## Paired by seed`, "", pairedTable(agg, cfg), "");
    L.push(`## Where smarter-compact is behind`, "", behindTable(behindRows(agg, cfg, facts)), "");
  }
  if (idle) L.push(idleSection(idle, cfg.prices.models, { forTables: true }), "");
  else L.push(...keep(IDLE_BEGIN, IDLE_END));
  if (mock)
    L.push(`## Real-model mode, offline check (scripted endpoint)`, "", mockTable(mock, cfg), "");
  if (rs) {
    L.push(`## Real sessions: estimator`, "", estimatorTable(rs), "", requestErrorLine(rs), "");
    L.push(`## Real sessions: replay`, "", replayTable(rs, cfg.prices.models), "");
  } else L.push(...keep("## Real sessions: estimator"), ...keep("## Real sessions: replay"));
  if (cont) L.push(continuitySection(cont, { forTables: true }), "");
  else L.push(...keep(CONTINUITY_BEGIN, CONTINUITY_END));
  return `${L.join("\n").trimEnd()}\n`;
}

/** REPORT.md's paragraph on the deterministic tables' hash, and the one before this run's. */
function tablesParagraph(hash, previous, quick) {
  return (
    `**Mechanism figures**: every deterministic table of this report (scores, tokens, cache, costs, peaks, requests, events; none of the timings) is also written alone to [${MECHANISM_TABLES}](${MECHANISM_TABLES}), SHA-256 \`${hash}\`. ` +
    (previous == null
      ? `There was no ${MECHANISM_TABLES} in ${quick ? "bench/out/quick/" : "bench/"} when this run started, so nothing to compare with.`
      : previous === hash
        ? `The ${MECHANISM_TABLES} that was there when this run started (from the run before) had the same SHA-256: this run reproduced its figures.`
        : `The ${MECHANISM_TABLES} that was there when this run started (from the run before) had SHA-256 \`${previous}\`: the figures differ from that run's (\`git diff bench/${MECHANISM_TABLES}\` shows where).`) +
    ` Two runs can be compared with \`sha256sum\` or \`diff\` of the file.`
  );
}

/** The anchor of a `## ` heading. */
const anchor = (heading) =>
  heading
    .replace(/^## /, "")
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(/ /g, "-");

/** The report's contents line (with the idle, continuity and proxy soak sections' links when it
 * has them). */
function contentsLine({ idle, continuity, soak }) {
  return `Contents: [headline](#headline) · [README snippet](#readme-snippet) · [method](#method) · [details](#mechanism-bench-details) · [where smarter-compact is behind](#where-smarter-compact-is-behind)${idle ? ` · [idle gaps: cache-cold cuts](#${anchor(IDLE_HEADING)})` : ""} · [real sessions](#real-sessions)${continuity ? ` · [continuity after a cut](#${anchor(CONTINUITY_HEADING)})` : ""} · [speed and scale](#speed-and-scale)${soak ? " · [proxy soak](#proxy-soak)" : ""} · [real-model mode](#real-model-mode) · [reproduce](#reproduce)`;
}

const BENCH = fileURLToPath(new URL("../", import.meta.url));
const today = () => new Date().toISOString().slice(0, 10);

/** REPORT.md after a merge of `phase` (a PHASE_NAMES key): the tables' hash paragraph, the
 * contents line (its links follow the sections the merged report has), the header's sentences
 * on where the sections come from (the merged one no longer said to be kept), and the Embeddings
 * subsection from bench/EMBED.md as it is now. */
function mergedHeader(phase, report, hash, previous) {
  const has = {
    idle: report.includes(IDLE_BEGIN),
    continuity: report.includes(CONTINUITY_BEGIN),
    soak: report.includes(SOAK_BEGIN),
  };
  const embed = report.includes("\n### Embeddings\n") ? embedDate(BENCH) : null;
  const merged = { name: PHASE_NAMES[phase], phase, date: today() };
  return rewriteProvenance(withEmbedSection(report, BENCH), { merged, embed })
    .split("\n")
    .map((line) =>
      line.startsWith("**Mechanism figures**")
        ? tablesParagraph(hash, previous, false)
        : line.startsWith("Contents: ")
          ? contentsLine(has)
          : line,
    )
    .join("\n");
}

/** The idle phase run alone: its section merged into the existing REPORT.md and
 * mechanism-tables.md from bench/out/idle.json, the rest of both files left as it was. */
export function mergeIdleReport({ out, reportDir, config }) {
  const idle = load(out, "idle");
  if (!idle) throw new Error(`no idle.json in ${out}: run the idle phase first`);
  const timing = load(out, "timing") ?? {};
  return mergeIdle({
    reportDir,
    idle,
    prices: config.prices.models,
    timing,
    tablesFile: MECHANISM_TABLES,
    sha256,
    header: (...a) => mergedHeader("idle", ...a),
  });
}

/** The continuity phase run alone: its section merged into the existing REPORT.md (before the
 * speed section) and mechanism-tables.md (at the end) from bench/out/continuity.json, the rest
 * of both files left as it was. */
export function mergeContinuityReport({ out, reportDir }) {
  const cont = load(out, "continuity");
  if (!cont) throw new Error(`no continuity.json in ${out}: run the continuity phase first`);
  const timing = load(out, "timing") ?? {};
  return mergeSection({
    reportDir,
    tablesFile: MECHANISM_TABLES,
    sha256,
    header: (...a) => mergedHeader("continuity", ...a),
    markers: { begin: CONTINUITY_BEGIN, end: CONTINUITY_END },
    report: { section: continuitySection(cont, { timing }), before: "## Speed and scale" },
    tables: { section: continuitySection(cont, { forTables: true }), before: null },
  });
}

/** bench/EMBED.md put into the existing REPORT.md of `reportDir` (\`make bench-embed\` runs it
 * after writing EMBED.md): its Embeddings subsection replaced and the header saying which EMBED.md
 * it shows, the rest left as it was. False when there is no REPORT.md or no such subsection. */
export function mergeEmbedReport({ reportDir = BENCH } = {}) {
  const path = join(reportDir, "REPORT.md");
  if (!existsSync(path)) return false;
  const text = readFileSync(path, "utf8");
  if (!text.includes("\n### Embeddings\n")) return false;
  const next = rewriteProvenance(withEmbedSection(text, BENCH), { embed: embedDate(BENCH) });
  writeFileSync(path, next);
  return true;
}

/** The phases by their timing.json keys and their names in the report. */
const PHASE_NAMES = {
  mechanism: "mechanism",
  idle: "idle",
  "real-sessions": "real sessions",
  continuity: "continuity",
  speed: "speed",
  proxy: "proxy (in speed and scale)",
  soak: "proxy soak",
};

/** The header's sentences on the phases: their times (those with a time in timing.json ran
 * into this bench/out), then where the other sections come from: `kept` from the report before,
 * `absent` (PHASE_NAMES keys), and `embed`, the date of the bench/EMBED.md shown (or null). */
function phaseTimes(timing, { kept, absent, embed }) {
  const ran = Object.keys(PHASE_NAMES).filter((k) => timing[k] != null);
  const list = ran.map((k) => `${PHASE_NAMES[k]} ${fmtS(timing[k])}`).join(", ");
  const name = (k) => PHASE_NAMES[k];
  return (
    `${kept.length || absent.length ? "Phases run" : "Whole run"} ${timing.total ? `${(timing.total / 60).toFixed(1)} min` : "–"} (${list}). ` +
    provenance({ kept: kept.map(name), absent: absent.map(name), embed })
  );
}

/** Writes REPORT.md, mechanism-tables.md and the plots from the results in `out`. The idle, real
 * sessions, continuity and speed sections of a phase whose results are not there (a run of
 * other phases with `--only`, e.g. `--only=mechanism` on a fresh checkout) stay as the files in
 * `reportDir` have them (not in a quick run, whose files are its own). */
export function writeReport({ bench, out, reportDir, config, quick, command, facts, speedModel }) {
  const read = (name) =>
    !quick && existsSync(join(reportDir, name)) ? readFileSync(join(reportDir, name), "utf8") : "";
  const oldReport = read("REPORT.md");
  const oldTables = read(MECHANISM_TABLES);
  const keep = (start, end) => {
    const s = sectionOf(oldReport, start, end);
    return s ? [s, ""] : [];
  };
  // the phases whose sections come from the report before, and those with no section at all
  const kept = [];
  const absent = [];
  const keepOf = (phase, start, end) => {
    const s = keep(start, end);
    (s.length ? kept : absent).push(phase);
    return s;
  };
  const mech = load(out, "mechanism");
  const rs = load(out, "real-sessions");
  const speed = load(out, "speed");
  const proxy = load(out, "proxy");
  const timing = load(out, "timing") ?? {};
  const mock = load(out, "mock-model");
  const real = load(out, "real-model");
  const idle = load(out, "idle");
  const cont = load(out, "continuity");
  const soakSaved = existsSync(join(out, "soak.json")); // run.mjs merges it after this
  // the config as run (tasks and seeds of this run) with the report's inputs (prices, baseline)
  const cfg = {
    ...config,
    ...(mech?.config ?? {}),
    prices: config.prices,
    baseline: config.baseline,
  };
  const prices = config.prices.models;
  const agg = mech ? aggregate(mech.trials) : null;
  const svg = (name, content) => {
    if (!content) return null;
    writeFileSync(join(reportDir, name), content);
    return name;
  };

  // the deterministic tables first: the report states their hash
  const tablesPath = join(reportDir, MECHANISM_TABLES);
  const previous = timing.tablesBefore ?? null; // the file as it was when the run started
  const configText = readFileSync(join(bench, "config.json"), "utf8");
  const tables = mechanismTables({
    cfg,
    agg,
    mech,
    idle,
    mock,
    rs,
    cont,
    facts,
    command,
    configText,
    old: oldTables,
  });
  writeFileSync(tablesPath, tables);
  const hash = sha256(tables);

  const m = timing.machine ?? {};
  const L = [];
  L.push(`# smarter-compact benchmarks`);
  L.push("");
  const headerAt = L.length; // written once the sections say what was kept
  L.push("");
  L.push("");
  L.push(tablesParagraph(hash, previous, quick));
  L.push("");
  L.push(
    contentsLine({
      idle: !!idle || oldReport.includes(IDLE_BEGIN),
      continuity: !!cont || oldReport.includes(CONTINUITY_BEGIN),
      soak: soakSaved || oldReport.includes(SOAK_BEGIN),
    }),
  );
  L.push("");
  if (!mech) absent.push("mechanism");

  if (mech) {
    L.push(`## Headline`);
    L.push("");
    L.push(
      `ContextBench-style synthetic tasks driven request by request through each arm; an oracle agent, the same for every arm, answers from what the arm exposes (the [method](#method) says exactly how). ` +
        `The **baseline** is ${armLabel(cfg.baseline, cfg)} (the history as is, under a ${size(cfg.arms[cfg.baseline]?.window ?? cfg.window)} window); the column next to it, ${armLabel("keep", cfg)}, is the same under the ${size(cfg.window)} window every other arm has. ` +
        `Means over ${plural(cfg.seeds.length, "seed")} per cell; tokens are o200k tokens of the serialised requests; costs per trial with the simulated prompt cache at list prices (${config.prices.asOf}, inputs of bench/config.json): ${Object.values(
          prices,
        )
          .map((p) => `${p.label} with ${tierLabel(p)}`)
          .join(", ")}. Cost ÷ baseline is the ratio of the mean costs.`,
    );
    L.push("");
    L.push(headline(agg, cfg));
    L.push("");
    // the test-log task sends a handful of requests: no plot of its own
    const plotted = cfg.tasks.filter((t) => t.kind !== "testlog");
    for (const t of plotted) svg(`tokens-per-request-${t.id}.svg`, tokensPlot(mech, t.id, cfg));
    const main = plotted.find((t) => t.id === "log-L6400") ?? plotted[plotted.length - 1];
    L.push(
      `![Prompt tokens per request, ${taskLabel(main.id)}](tokens-per-request-${main.id}.svg)`,
    );
    L.push("");
    L.push(
      `The same plot for the other tasks: ${plotted
        .filter((t) => t !== main)
        .map((t) => `[${taskLabel(t.id)}](tokens-per-request-${t.id}.svg)`)
        .join(", ")}.`,
    );
    L.push("");
    svg("score-vs-tokens.svg", scorePlot(agg, cfg));
    L.push(`![Score vs tokens per trial](score-vs-tokens.svg)`);
    L.push("");
    L.push(`## README snippet`);
    L.push("");
    L.push("```markdown");
    L.push(readmeSnippet(agg, cfg, command));
    L.push("```");
    L.push("");
  }

  L.push(methodSection(cfg, facts));

  if (mech) {
    L.push(`## Mechanism bench details`);
    L.push("");
    L.push(`### Score by arm (lookup and count separately)`);
    L.push("");
    L.push(scoreTable(agg, cfg));
    L.push("");
    L.push(questionsLine(cfg));
    L.push("");
    const tl = testlogTable(agg, cfg, facts);
    if (tl) {
      L.push(`### Test log: which test failed`);
      L.push("");
      L.push(
        `Each arm's score on the test-log task (the share of trials whose answer named exactly the failing tests; the [method](#method) says how the output is made and read). smarter-compact's cell says in how many trials no failing test was visible in its compressed output, so the oracle called \`smart_compact_get\` with a grep before answering.`,
      );
      L.push("");
      L.push(tl);
      L.push("");
    }
    L.push(`### Embedder off and on (the default configuration)`);
    L.push("");
    L.push(embedderSection(mech, cfg));
    L.push("");
    L.push(`### Tokens, cache and cost by arm`);
    L.push("");
    L.push(costTable(agg, cfg, { timings: true }));
    L.push("");
    L.push(
      `"Arm's own time" is the time the arm took to turn the history into the request (smarter-compact: \`transform()\` with the store on better-sqlite3; compact_context: nothing until a compaction, then \`compactContext()\`), on this machine, inside the benchmark process.`,
    );
    L.push("");
    L.push(
      `Costs are per trial and include output tokens (the scripted assistant messages and the answers). ${Object.values(
        prices,
      )
        .map((p) =>
          p.tiers.length > 1
            ? `${p.label} charges its long-prompt tier (${p.tiers
                .slice(1)
                .map((t) => `${+(t.input / p.tiers[0].input).toFixed(2)}× the input rate`)
                .join(", ")}) for every request over ${size(p.tiers[0].upTo)} prompt tokens`
            : `${p.label} has one tier`,
        )
        .join("; ")}.`,
    );
    L.push("");
    L.push(checkLines(mech.trials, cfg).join("\n\n"));
    L.push("");
    L.push(`### Paired by seed: smarter-compact against each arm`);
    L.push("");
    L.push(pairedTable(agg, cfg));
    L.push("");
    L.push(`## Where smarter-compact is behind`);
    L.push("");
    const b = behindRows(agg, cfg, facts);
    if (b.length) {
      L.push(
        `Every place where another arm has a better mean score, a lower cost, a higher cache hit rate or a lower peak than smarter-compact, with the numbers that explain it (generated from the results):`,
      );
      L.push("");
    }
    L.push(behindTable(b));
    L.push("");
    L.push(BEHIND_NOTES);
    L.push("");
  }

  if (idle) L.push(idleSection(idle, prices, { timing }), "");
  else L.push(...keepOf("idle", IDLE_BEGIN, IDLE_END));
  if (rs) L.push(realSessionsSection(rs, prices));
  else L.push(...keepOf("real-sessions", "## Real sessions"));
  if (cont) L.push(continuitySection(cont, { timing }), "");
  else L.push(...keepOf("continuity", CONTINUITY_BEGIN, CONTINUITY_END));
  let hasSpeed = !!speed;
  if (speed) {
    const lat = svg("latency-vs-session-size.svg", latencyPlot(speed, SPEED));
    L.push(speedSection(speed, { bench, latSvg: lat, proxy, facts, speedModel, node: m.node }));
    if (!proxy) absent.push("proxy");
  } else {
    const s = keepOf("speed", "## Speed and scale");
    L.push(...s);
    hasSpeed = s.length > 0;
    (hasSpeed ? kept : absent).push("proxy"); // its subsection is the speed section's
  }
  // the saved soak is merged after this (run.mjs); without one, the report's section stays
  if (!soakSaved) L.push(...keepOf("soak", SOAK_BEGIN, SOAK_END));
  L.push(realModelSection(mock, real, cfg));
  L.push(reproduce());
  L[headerAt] =
    `Generated by \`${command}\`${quick ? "" : " (`node bench/run.mjs`)"} on ${timing.at?.slice(0, 10) ?? "?"}: ${m.cpu ?? "?"}, ${m.cores ?? "?"} cores, ${m.memGB ?? "?"} GB, ${m.platform ?? ""}, Node ${m.node ?? "?"}. ` +
    phaseTimes(timing, { kept, absent, embed: hasSpeed ? embedDate(bench) : null }) +
    `Everything is offline and seeded.` +
    (timing.load
      ? ` Load average (5 min) at the end of each phase: ${Object.entries(timing.load)
          .map(([k, v]) => `${k} ${v.toFixed(1)}`)
          .join(", ")} on ${m.cores ?? "?"} cores.`
      : "");
  // a kept speed section shows bench/EMBED.md as it is now, not as it was then
  const text = withEmbedSection(L.join("\n"), bench);
  writeFileSync(join(reportDir, "REPORT.md"), `${text}\n`);
  return { tables: tablesPath, hash, previous };
}

function reproduce() {
  return `## Reproduce

\`\`\`sh
make bench                      # = node bench/run.mjs: all phases, writes bench/REPORT.md, bench/${MECHANISM_TABLES} and bench/*.svg
node bench/run.mjs --quick      # smoke run: small tasks, one seed; writes bench/out/quick/
node bench/run.mjs --only=speed # one phase (mechanism, idle, real-sessions, continuity, speed, proxy); --report-only rebuilds the report
node bench/run.mjs --only=idle  # the idle phase alone: merges its section into REPORT.md and ${MECHANISM_TABLES}
node bench/run.mjs --only=continuity  # the continuity phase alone: merges its section the same way
make bench-embed                # the embedder's speed and memory: writes bench/EMBED.md
\`\`\`

Inputs: \`bench/config.json\` (sizes, seeds, arm parameters, window, cache model, prices, the headline's baseline), the built package in \`npm/\`, the real sessions in \`tests/data/sessions/swe-traj/\`. Intermediate results (per-trial JSON) land in \`bench/out/\` (gitignored). Nothing here is a pass/fail test.
`;
}
