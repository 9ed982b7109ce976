// The 32 real sessions (tests/data/sessions/swe-traj): the token estimator against o200k by
// content kind, and smarter-compact replayed request by request at several trim_at.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { engineModule } from "../../npm/js/wasm.js";
import { Meter, cost, totals } from "./meter.mjs";
import { quantile } from "./stats.mjs";
import { countText, fixedTokens, messageTextTokens, messageTokens } from "./tokens.mjs";

export const SESSIONS_DIR = new URL("../../tests/data/sessions/swe-traj/", import.meta.url)
  .pathname;

export function sessionFiles(limit) {
  const files = readdirSync(SESSIONS_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
  return (limit ? files.slice(0, limit) : files).map((f) => join(SESSIONS_DIR, f));
}

/** The command of an assistant message (first ```bash block) and the text around it. */
function bashBlock(s) {
  const start = s.indexOf("```bash");
  if (start < 0) return null;
  const body = start + "```bash".length;
  const end = s.indexOf("```", body);
  if (end < 0) return null;
  return { rest: `${s.slice(0, start)}${s.slice(end + 3)}`.trim(), cmd: s.slice(body, end).trim() };
}

/** Kind of a tool output, as tests/token_estimate.rs classifies it: json, code or logs. */
function classifyOutput(t) {
  let body = t.includes("<output>") ? t.slice(t.indexOf("<output>") + 8) : t;
  if (body.includes("</output>")) body = body.slice(0, body.lastIndexOf("</output>"));
  body = body.trim();
  if (body.startsWith("{") || body.startsWith("[")) {
    try {
      JSON.parse(body);
      return "json";
    } catch {
      // not JSON
    }
  }
  const lines = body.split("\n").filter((l) => l.trim());
  if (!lines.length) return "logs";
  if (lines.some((l) => l.startsWith("diff --git") || l.startsWith("@@ -"))) return "code";
  const numbered = (l) => /^\s*\d+\t/.test(l);
  if (lines.filter(numbered).length * 2 >= lines.length) return "code";
  const SOURCE = [
    "def ",
    "class ",
    "import ",
    "from ",
    "return",
    "if ",
    "elif ",
    "else:",
    "for ",
    "while ",
    "try:",
    "except",
    "with ",
    "raise ",
    "@",
    "#",
    ")",
    "]",
    "}",
    '"""',
  ];
  const source = (l) =>
    l.length - l.trimStart().length >= 4 || SOURCE.some((k) => l.trimStart().startsWith(k));
  return lines.filter(source).length * 10 >= lines.length * 6 ? "code" : "logs";
}

/** Every text of the sessions with its kind (the split of tests/token_estimate.rs). */
function corpus(files) {
  const items = [];
  for (const f of files) {
    const d = JSON.parse(readFileSync(f, "utf8"));
    for (const m of d.messages) {
      const t = typeof m.content === "string" ? m.content : "";
      if (m.role === "assistant") {
        const b = bashBlock(t);
        if (b) {
          if (b.rest) items.push(["prose", b.rest]);
          items.push(["json (tool-call arguments)", JSON.stringify({ command: b.cmd })]);
        } else items.push(["prose", t]);
      } else if (m.role === "user" && t.startsWith("<returncode>"))
        items.push([`tool output: ${classifyOutput(t)}`, t]);
      else if (m.role === "user" && t.startsWith("diff --git"))
        items.push(["tool output: code", t]);
      else items.push(["instructions (system, task)", t]);
    }
  }
  return items;
}

/** Messages of at least this many true tokens enter the p90 and p5/p95 error figures. */
export const LARGE_MESSAGE_TOKENS = 50;
/** Requests of at least this many true tokens enter the whole-request error distribution. */
export const LARGE_REQUEST_TOKENS = 1000;

function errStats(pairs) {
  const truth = pairs.reduce((s, p) => s + p[0], 0);
  const est = pairs.reduce((s, p) => s + p[1], 0);
  const errs = pairs.filter((p) => p[0] > 0).map((p) => (Math.abs(p[1] - p[0]) / p[0]) * 100);
  const large = pairs
    .filter((p) => p[0] >= LARGE_MESSAGE_TOKENS)
    .map((p) => (Math.abs(p[1] - p[0]) / p[0]) * 100);
  const signed = pairs
    .filter((p) => p[0] >= LARGE_MESSAGE_TOKENS)
    .map((p) => ((p[1] - p[0]) / p[0]) * 100);
  return {
    n: pairs.length,
    truth,
    est,
    bias: (est / Math.max(1, truth) - 1) * 100,
    mae: errs.reduce((s, x) => s + x, 0) / Math.max(1, errs.length),
    p90: quantile(large, 0.9),
    nLarge: large.length,
    p5: quantile(signed, 0.05),
    p95: quantile(signed, 0.95),
  };
}

/** Estimator error by content kind against o200k_base. */
export async function estimatorError(files) {
  const glue = await engineModule();
  const items = corpus(files);
  const byKind = new Map();
  for (const [kind, text] of items) {
    const pair = [countText(text), glue.estimateTokens(text)];
    if (!byKind.has(kind)) byKind.set(kind, []);
    byKind.get(kind).push(pair);
  }
  const rows = [...byKind.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([kind, pairs]) => ({ kind, ...errStats(pairs) }));
  rows.push({ kind: "all", ...errStats([...byKind.values()].flat()) });
  return rows;
}

/** Replays every session at each trim_at; returns per-trim_at figures and the request-level
 * estimate error (engine's before_tokens vs o200k of the serialised request). */
export async function replayAll(files, trimAts, stateRoot, prices) {
  const sessions = files.map((f) => loadSession(f));
  const out = [];
  const requestErr = [];
  // keep-everything reference: the requests as the host sends them
  const keepRows = [];
  const perSessionKeep = [];
  for (const s of sessions) {
    const m = new Meter(fixedTokens("", []), { minPrefix: 1024 });
    for (const r of requests(s.history)) m.request(r);
    keepRows.push(...m.rows);
    perSessionKeep.push(totals(m.rows));
  }
  const keep = totals(keepRows);
  for (const trimAt of trimAts) {
    const rows = [];
    let trims = 0;
    let compressed = 0;
    let reused = 0;
    let reusable = 0;
    let overLimit = 0;
    let failOpens = 0;
    const reductions = [];
    for (const [si, s] of sessions.entries()) {
      const dir = join(stateRoot, `rs-${trimAt}-${si}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const c = await createCompactor({
        sessionId: `rs${si}`,
        stateDir: dir,
        embedder: false,
        config: { trimAtTokens: trimAt },
      });
      const m = new Meter(fixedTokens("", []), { minPrefix: 1024 });
      let prev = null;
      for (const req of requests(s.history)) {
        const { messages, stats } = await c.transform(req, { format: "openai" });
        if (stats.fail_open) failOpens++;
        if (stats.trimmed) trims++;
        compressed += stats.compressed ?? 0;
        if (stats.over_limit) overLimit++;
        if (prev && !stats.trimmed) {
          reusable++;
          if (
            prev.every(
              (x, i) => x === messages[i] || JSON.stringify(x) === JSON.stringify(messages[i]),
            )
          )
            reused++;
        }
        prev = messages;
        m.request(messages);
        if (trimAt === trimAts[0] && stats.before_tokens) {
          const json = req.reduce((acc, x) => acc + messageTokens(x), 0);
          const text = req.reduce((acc, x) => acc + messageTextTokens(x), 0);
          requestErr.push([json, text, stats.before_tokens]);
        }
      }
      await c.close();
      rmSync(dir, { recursive: true, force: true });
      const t = totals(m.rows);
      reductions.push(1 - t.tokens / perSessionKeep[si].tokens);
      rows.push(...m.rows);
    }
    const t = totals(rows);
    out.push({
      trimAt,
      sessions: sessions.length,
      requests: t.requests,
      trims,
      compressed,
      overLimit,
      failOpens,
      tokensKeep: keep.tokens,
      tokens: t.tokens,
      reduction: 1 - t.tokens / keep.tokens,
      reductionMedian: quantile(reductions, 0.5),
      prefixReuse: reusable ? reused / reusable : null,
      reused,
      reusable,
      hit: t.hit,
      hitKeep: keep.hit,
      peak: t.peak,
      peakKeep: keep.peak,
      costRatio: Object.fromEntries(
        Object.entries(prices).map(([k, p]) => [k, cost(rows, p) / cost(keepRows, p)]),
      ),
    });
  }
  const dist = (truthAt) => {
    const pairs = requestErr.map((p) => [p[truthAt], p[2]]);
    const signed = pairs
      .filter((p) => p[0] >= LARGE_REQUEST_TOKENS)
      .map((p) => ((p[1] - p[0]) / p[0]) * 100);
    return {
      n: signed.length,
      bias: (pairs.reduce((s, p) => s + p[1], 0) / pairs.reduce((s, p) => s + p[0], 0) - 1) * 100,
      p5: quantile(signed, 0.05),
      p50: quantile(signed, 0.5),
      p95: quantile(signed, 0.95),
      maxAbs: Math.max(...signed.map(Math.abs)),
    };
  };
  return { replay: out, requestError: { text: dist(1), json: dist(0) } };
}
