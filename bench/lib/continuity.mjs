// The continuity measure: how much of what the agent needs next is still visible after a cut.
// The 32 real sessions are replayed request by request through a compactor; for every request
// sent under a cut, the distinctive names (paths, identifiers, numbers) of the next two recorded
// assistant messages that the full request showed the agent are looked up in the rewritten
// request. A request's score is the fraction of those names still there.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { f2, plural, size, table } from "./format.mjs";
import { mean } from "./stats.mjs";

/** The compactor options of each arm (passed in createCompactor's `config`), in report order. */
export const CONTINUITY_ARMS = {
  bare: { digestFraction: 0 },
  users: { digestParts: "users" },
  toc: { digestParts: "toc" },
  files: { digestParts: "files" },
  names: { digestParts: "names" },
  all: { digestParts: "users,toc,files,todo,names" },
};
/** The thresholds the measure replays at. */
export const CONTINUITY_TRIM_ATS = [8000, 16000, 32000];
/** How many recorded assistant messages after a request the measure looks at. */
export const NEXT_MESSAGES = 2;
/** The target of the digest: a score at each trim_at, with a mean digest of at most this
 * fraction of trim_at. */
export const CONTINUITY_TARGET = { scores: { 8000: 0.9, 16000: 0.95 }, digestFraction: 0.05 };

/** The section's markers (the merge replaces what lies between them) and heading. */
export const CONTINUITY_BEGIN = "<!-- continuity phase: begin -->";
export const CONTINUITY_END = "<!-- continuity phase: end -->";
export const CONTINUITY_HEADING = "## Continuity after a cut";

/** Names the patterns match that say nothing about the task: the workspace root, system paths
 * and a few common abbreviations and Python boilerplate names (compared lower-cased). */
export const STOPLIST = new Set([
  "/testbed",
  "testbed",
  "/dev/null",
  "/dev/stdout",
  "/dev/stderr",
  "/tmp",
  "/bin/bash",
  "/bin/sh",
  "/usr/bin/env",
  "/usr/bin/python",
  "/usr/bin/python3",
  "and/or",
  "n/a",
  "i.e",
  "e.g",
  "etc",
  "__name__",
  "__main__",
  "__init__",
]);

/** File extensions that make a token without a `/` a file name. */
const FILE_EXT =
  /\.(py|pyi|pyx|js|mjs|cjs|ts|tsx|jsx|json|md|rst|txt|cfg|ini|toml|ya?ml|lock|c|h|cc|cpp|hpp|rs|go|java|kt|rb|php|sh|bash|html?|css|scss|xml|csv|log|diff|patch|sql|tex|in|out)$/i;
/** Runs of name characters: letters, digits, `_`, `.`, `/`, `-` (a path may start with `/`). */
const TOKEN = /[/A-Za-z0-9_][A-Za-z0-9_./-]*/g;
const WORD_CHAR = /[A-Za-z0-9_]/;

/** The kind of one token, or null when it is not a distinctive name: "path" (a `/` or a file
 * extension), "number" (two digits or more), "ident" (snake_case, camelCase, CamelCase or a
 * dotted name, at least 4 characters). */
export function nameKind(t) {
  if (STOPLIST.has(t.toLowerCase())) return null;
  if (/^\d+$/.test(t)) return t.length >= 2 ? "number" : null;
  if (t.length < 4 || !/[A-Za-z]/.test(t)) return null;
  if (FILE_EXT.test(t)) return "path";
  // a `/` makes a path when it joins two segments ("/def" is a sed address, not a path)
  if (t.includes("/")) return t.split("/").filter(Boolean).length >= 2 ? "path" : null;
  if (t.includes("-")) return null; // hyphenated words: their parts are classified instead
  if (t.includes(".")) return /^[A-Za-z_]/.test(t) && !t.includes("..") ? "ident" : null;
  if (t.includes("_")) return "ident";
  if (/^[A-Z]+s$/.test(t)) return null; // plural acronyms (URLs, APIs)
  if (/[a-z]/.test(t) && /[A-Z]/.test(t.slice(1))) return "ident";
  return null;
}

/** The distinctive names of a text, each once, in order of first appearance, with their kind. */
export function extractNames(text) {
  const out = new Map();
  const add = (t) => {
    const kind = nameKind(t);
    if (kind && !out.has(t)) out.set(t, kind);
  };
  // an escape written out in a command (`printf 'a\\nb'`) separates names
  for (const [raw] of text.replace(/\\[ntr]/g, " ").matchAll(TOKEN)) {
    const t = raw.replace(/[./-]+$/, "");
    if (!t) continue;
    if (nameKind(t)) add(t);
    else if (t.includes("-") && !t.includes("/")) for (const part of t.split("-")) add(part);
  }
  return [...out].map(([name, kind]) => ({ name, kind }));
}

/** The decoded text of messages: every string value of what JSON.stringify would write, and the
 * string values of tool-call arguments (themselves JSON), one per line. */
export function decodedText(messages) {
  const out = [];
  const walk = (v, key) => {
    if (typeof v === "string") {
      out.push(v);
      if (key === "arguments") {
        try {
          walk(JSON.parse(v));
        } catch {
          // arguments that are not JSON stay as they are
        }
      }
    } else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(messages);
  return out.join("\n");
}

/** Whether `name` occurs in `text` as a substring that is not part of a longer name (no letter,
 * digit or `_` right before or after it): `12` is not found in `2012`, nor `collect` in
 * `collect_related`. */
export function occurs(text, name) {
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const before = at > 0 ? text[at - 1] : "";
    const after = text[at + name.length] ?? "";
    if (!WORD_CHAR.test(before) && !WORD_CHAR.test(after)) return true;
  }
  return false;
}

/** The first `n` assistant messages of `history` at or after index `from`. */
export function nextAssistants(history, from, n = NEXT_MESSAGES) {
  const out = [];
  for (let i = from; i < history.length && out.length < n; i++)
    if (history[i].role === "assistant") out.push(history[i]);
  return out;
}

/** Scores one request: the names of `next` (messages) that occur in `full` (the request as the
 * host sent it) and, of those, the ones that occur in `rewritten` (what the compactor sent).
 * Texts may be given decoded (strings) or as message arrays. Null when no name qualifies. */
export function scoreRequest({ full, rewritten, next }) {
  const fullText = typeof full === "string" ? full : decodedText(full);
  const outText = typeof rewritten === "string" ? rewritten : decodedText(rewritten);
  const names = extractNames(typeof next === "string" ? next : decodedText(next)).filter((x) =>
    occurs(fullText, x.name),
  );
  if (!names.length) return null;
  const missing = names.filter((x) => !occurs(outText, x.name));
  return { names, missing, score: 1 - missing.length / names.length };
}

/** The digest's size in a transform result's stats (the engine's `digest_tokens`), or null when
 * the engine reports none. */
export function digestTokensOf(stats) {
  const v = stats.digest_tokens ?? stats.digestTokens;
  return typeof v === "number" ? v : null;
}

/** Replays `sessions` (trajectory files or loaded `{ id, history }`) at each trim_at through
 * each arm's compactor and scores every request sent under a cut. Returns the per-cell means
 * (arm × trim_at), per-session means and the per-request scores with the names that were
 * missing. `stateRoot`: where the compactors' stores go (a temporary directory by default). */
export async function runContinuity({
  sessions,
  trimAts = CONTINUITY_TRIM_ATS,
  arms = CONTINUITY_ARMS,
  stateRoot,
  log = () => {},
}) {
  const loaded = sessions.map((s) => (typeof s === "string" ? loadSession(s) : s));
  const root = stateRoot ?? mkdtempSync(join(tmpdir(), "sc-continuity-"));
  const cells = [];
  const perRequest = [];
  try {
    for (const [arm, options] of Object.entries(arms)) {
      for (const trimAt of trimAts) {
        const cell = await runCell(loaded, arm, options, trimAt, root, perRequest);
        cells.push(cell);
        log(
          `continuity ${arm.padEnd(5)} trim_at ${trimAt}: ${f2(cell.score)} over ${cell.scored} requests (${cell.underCut} under a cut), sessions ${f2(cell.sessionMean)}`,
        );
      }
    }
  } finally {
    if (!stateRoot) rmSync(root, { recursive: true, force: true });
  }
  return {
    sessions: loaded.map((s) => s.id),
    trimAts,
    arms,
    nextMessages: NEXT_MESSAGES,
    cells,
    perRequest,
  };
}

/** One arm at one trim_at over all sessions. */
async function runCell(sessions, arm, options, trimAt, root, perRequest) {
  const scores = [];
  const sessionMeans = [];
  const digests = [];
  const kinds = {};
  let requestsSent = 0;
  let underCut = 0;
  let failOpens = 0;
  let repeats = 0;
  for (const [si, s] of sessions.entries()) {
    const dir = join(root, `cont-${arm}-${trimAt}-${si}`);
    rmSync(dir, { recursive: true, force: true });
    const c = await createCompactor({
      sessionId: `cont${si}`,
      stateDir: dir,
      embedder: false,
      config: { trimAtTokens: trimAt, ...options },
    });
    const own = [];
    try {
      for (const [k, req] of requests(s.history).entries()) {
        requestsSent++;
        const { messages, stats } = await c.transform(structuredClone(req), { format: "openai" });
        if (stats.fail_open) failOpens++;
        if (!(stats.cut > 0)) continue;
        underCut++;
        const d = digestTokensOf(stats);
        if (d != null) digests.push(d);
        const r = scoreRequest({
          full: req,
          rewritten: messages,
          next: nextAssistants(s.history, req.length),
        });
        if (!r) continue;
        own.push(r.score);
        for (const x of r.names) {
          const t = (kinds[x.kind] ??= { names: 0, kept: 0 });
          t.names++;
          if (!r.missing.includes(x)) t.kept++;
        }
        perRequest.push({
          arm,
          trimAt,
          session: s.id,
          request: k,
          names: r.names.length,
          score: r.score,
          missing: r.missing.map((x) => x.name),
        });
      }
      // trim regret: calls the recorded agent made again after a cut had removed the first
      repeats += (await c.status()).regret?.repeats ?? 0;
    } finally {
      await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
    scores.push(...own);
    if (own.length) sessionMeans.push(mean(own));
  }
  return {
    arm,
    trimAt,
    requests: requestsSent,
    underCut,
    scored: scores.length,
    failOpens,
    score: mean(scores),
    sessionMean: mean(sessionMeans),
    sessionsScored: sessionMeans.length,
    min: scores.length ? Math.min(...scores) : null,
    perfect: scores.length ? scores.filter((x) => x === 1).length / scores.length : null,
    digest: digests.length ? { mean: mean(digests), max: Math.max(...digests) } : null,
    repeats,
    kinds,
  };
}

const pct1 = (x) => `${(x * 100).toFixed(1)}%`;

/** "mean / max (mean as % of trim_at)" of a cell's digest, or "–" when the engine reported none. */
function digestCell(c) {
  if (!c.digest) return "–";
  return `${Math.round(c.digest.mean)} / ${c.digest.max} (${pct1(c.digest.mean / c.trimAt)})`;
}

/** Whether an arm meets the target (CONTINUITY_TARGET): "yes", "no" or "–" (no such trim_at). */
export function meetsTarget(results, arm) {
  const t = CONTINUITY_TARGET;
  const cells = Object.keys(t.scores).map((at) =>
    results.cells.find((c) => c.arm === arm && c.trimAt === Number(at)),
  );
  if (cells.some((c) => !c || c.score == null)) return "–";
  const ok = cells.every(
    (c) =>
      c.score >= t.scores[c.trimAt] &&
      c.digest != null &&
      c.digest.mean <= t.digestFraction * c.trimAt,
  );
  return ok ? "yes" : "no";
}

/** The table of the section: arm × trim_at → scores, requests and digest tokens. */
export function continuityTable(results) {
  const rows = [];
  for (const arm of Object.keys(results.arms)) {
    for (const at of results.trimAts) {
      const c = results.cells.find((x) => x.arm === arm && x.trimAt === at);
      if (!c) continue;
      rows.push([
        at === results.trimAts[0] ? `**${arm}**` : "",
        size(at),
        f2(c.score),
        f2(c.sessionMean),
        f2(c.min),
        c.perfect == null ? "–" : pct1(c.perfect),
        `${c.scored} of ${c.underCut}`,
        digestCell(c),
        c.repeats == null ? "–" : String(c.repeats),
      ]);
    }
  }
  return table(
    [
      "arm",
      "trim_at",
      "score (mean over requests)",
      "mean over sessions",
      "lowest",
      "requests at 1.00",
      "requests scored (of those under a cut)",
      "digest tokens mean / max",
      "calls made again after a cut removed them",
    ],
    rows,
  );
}

/** What share of the names of each kind stayed visible, per arm at each trim_at. */
function kindsTable(results) {
  const kinds = ["path", "ident", "number"];
  const label = { path: "paths", ident: "identifiers", number: "numbers" };
  const rows = [];
  for (const arm of Object.keys(results.arms))
    for (const at of results.trimAts) {
      const c = results.cells.find((x) => x.arm === arm && x.trimAt === at);
      if (!c) continue;
      rows.push([
        at === results.trimAts[0] ? `**${arm}**` : "",
        size(at),
        ...kinds.map((k) => {
          const t = c.kinds[k];
          return t ? `${f2(t.kept / t.names)} (${t.names})` : "–";
        }),
      ]);
    }
  return table(["arm", "trim_at", ...kinds.map((k) => `${label[k]} kept (names)`)], rows);
}

/** The continuity phase's section of REPORT.md, or of mechanism-tables.md (`forTables`: the
 * tables alone, no prose or timing). `timing`: bench/out/timing.json. */
export function continuitySection(results, { timing = null, forTables = false } = {}) {
  const L = [CONTINUITY_BEGIN, CONTINUITY_HEADING, ""];
  const armText = Object.entries(results.arms)
    .map(([k, v]) => `**${k}** \`${JSON.stringify(v)}\``)
    .join(", ");
  if (!forTables)
    L.push(
      `How much of what the agent needs next is still visible after a cut. The ${plural(results.sessions.length, "real session")} of \`tests/data/sessions/swe-traj/\` are replayed request by request through \`createCompactor\` (\`trimAtTokens\` = trim_at) for each arm: ${armText}. ` +
        `For every request sent under a cut (\`stats.cut > 0\`), the next ${results.nextMessages} assistant messages of the recording (text and tool-call arguments) give the **names** the agent went on to use: paths (a \`/\` or a file extension), identifiers (snake_case, camelCase, CamelCase, dotted; at least 4 characters; a short stoplist in \`bench/lib/continuity.mjs\`) and numbers of two digits or more. ` +
        `Only the names that occur in the full request (what the recorded agent saw) count. A request's **score** is the fraction of them that occur in the rewritten request (every decoded string of it: the pointer message, contents, tool-call arguments), each as a substring not inside a longer name; requests without such names are not scored. ` +
        `Digest tokens: the engine's \`stats.digest_tokens\` on the requests under a cut ("–": the engine reports none). ` +
        `Calls made again: the trim regret of \`context_status\` summed over the sessions, tool calls with the same tool and arguments as one the cut in force had removed (the recorded agent ran them with its whole history in view, so this counts how often a cut hides a call that comes back, not a call the cut caused). ` +
        `Target: at least ${CONTINUITY_TARGET.scores[8000]} at 8k and ${CONTINUITY_TARGET.scores[16000]} at 16k with a mean digest of at most ${CONTINUITY_TARGET.digestFraction * 100}% of trim_at.`,
      "",
    );
  L.push(continuityTable(results), "");
  L.push(
    `Target met: ${Object.keys(results.arms)
      .map((a) => `${a} ${meetsTarget(results, a)}`)
      .join(", ")}.`,
    "",
  );
  if (!forTables) L.push(`### Names kept by kind`, "");
  L.push(kindsTable(results), "");
  if (!forTables && timing?.continuity != null)
    L.push(
      `The continuity phase ran in ${Math.round(timing.continuity)} s (\`node bench/run.mjs --only=continuity\` runs it alone and merges this section into the report; the other sections stay as they were).`,
      "",
    );
  L.push(CONTINUITY_END);
  return L.join("\n");
}
