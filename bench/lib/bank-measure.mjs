// The memory bank measure (`node bench/run.mjs --only=bank`): the real sessions of one
// repository replayed one after another through one memory bank with recall on trim, so that
// every cut writes its memories (files touched, failures and fixes, user turns) and recalls the
// earlier sessions' ones. It counts how many requests carry a recall block, and how often (as a
// fraction of cuts) the block names a file path or identifier that the agent's next two recorded
// assistant messages then use.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { openSqlite } from "../../npm/js/shims/index.js";

export const BANK_BEGIN = "<!-- bank:begin -->";
export const BANK_END = "<!-- bank:end -->";
/** The section goes before this heading when the report has none yet. */
const BANK_BEFORE = "## Speed and scale";
const BLOCK = /<smarter-compact-recall[^>]*>([\s\S]*?)<\/smarter-compact-recall>/;
const PATH =
  /(?:[\w.-]+\/)+[\w.-]*\w|\b[\w-]+\.(?:py|pyx|rs|js|mjs|ts|rst|txt|cfg|ini|toml|json|ya?ml|md|html|css|c|h)\b/g;
const IDENT = /\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\b/g;

/** The repository of a session file: `django__django-11087.json` → `django__django`. */
export function repositoryOf(file) {
  return basename(file, ".json").replace(/-\d+$/, "");
}

/** The text of a message as the model reads it: content and tool call arguments. */
export function messageText(m) {
  const parts = [];
  if (typeof m.content === "string") parts.push(m.content);
  else if (Array.isArray(m.content)) for (const p of m.content) parts.push(p?.text ?? "");
  for (const c of m.tool_calls ?? []) parts.push(c.function?.arguments ?? "");
  return parts.join("\n");
}

/** The memories of the recall block of a rewritten request (`- …` lines), or null. */
export function recallMemories(messages) {
  for (const m of messages) {
    const found = BLOCK.exec(messageText(m));
    if (found)
      return found[1]
        .split("\n")
        .filter((l) => l.startsWith("- "))
        .map((l) => l.slice(2));
  }
  return null;
}

/** File paths and identifiers a memory names: paths (`a/b.py`, `x.rst`), and names with an
 * underscore, an inner capital or a dot (`only_fields`, `QuerySet`, `Collector.delete`). */
export function namesIn(text) {
  const names = new Set((text.match(PATH) ?? []).filter(pathLike));
  for (const w of text.match(IDENT) ?? []) {
    if (w.length < 4 || names.has(w)) continue;
    if (/_/.test(w.replace(/^_+|_+$/g, "")) || /[a-z][A-Z]/.test(w) || /^[A-Z][a-z]+[A-Z]/.test(w))
      names.add(w);
    else if (w.includes(".") && !/^\d/.test(w)) names.add(w);
  }
  return [...names];
}

/** A path worth counting: its last segment a name (two characters or more, a letter), with an
 * extension or another such segment, and no one-character directory (`s/if` is sed). */
function pathLike(p) {
  const segs = p.replace(/^\.\//, "").split("/");
  const named = (x) => x.length >= 2 && /[A-Za-z]/.test(x);
  if (!named(segs.at(-1)) || segs.slice(0, -1).some((x) => x.length === 1)) return false;
  return /\.[A-Za-z]\w*$/.test(segs.at(-1)) || segs.filter(named).length >= 2;
}

/** Whether `text` uses `name`: as a path anywhere, as an identifier on word boundaries. */
function uses(text, name) {
  if (name.includes("/")) return text.includes(name);
  const at = text.indexOf(name);
  if (at < 0) return false;
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\w])${esc}($|[^\\w])`).test(text);
}

/** The text of the next two assistant messages at or after index `i` of `history`. */
function nextAssistants(history, i) {
  const out = [];
  for (let k = i; k < history.length && out.length < 2; k++)
    if (history[k].role === "assistant") out.push(messageText(history[k]));
  return out.join("\n");
}

/** The control for `used`: each cut's block names against the next messages of a cut of
 * another session (the cut half the list away, or the next one of another session), so that
 * names every session of the repository uses anyway count there too. */
function control(records) {
  let hits = 0;
  const n = records.length;
  for (let i = 0; i < n; i++) {
    let j = (i + Math.floor(n / 2)) % n;
    for (let k = 0; k < n && records[j].session === records[i].session; k++) j = (j + 1) % n;
    if (records[j].session === records[i].session) continue;
    if (records[i].names.some((name) => uses(records[j].next, name))) hits++;
  }
  return hits;
}

/** The memories of a bank file by kind: `{cut: n, episode: n, …}`. */
async function bankKinds(path) {
  if (!existsSync(path)) return {};
  const db = await openSqlite({ path, readonly: true });
  try {
    const rows = db.query("SELECT kind, count(*) FROM memories GROUP BY kind ORDER BY kind", []);
    return Object.fromEntries(rows.map(([k, n]) => [k, Number(n)]));
  } finally {
    db.close?.();
  }
}

/**
 * Replays `files` (session files), grouped by repository, each group through one bank with
 * recall on at `trimAt`; groups of one session are left out (nothing earlier to recall).
 * Returns `{ trimAt, groups: [...], total }`; each group counts requests, requests with a recall
 * block, cuts, cuts with a block, cuts whose block names something the next two assistant
 * messages use (`used`), and of those, something the request as sent did not already contain
 * (`usedNew`).
 */
export async function bankMeasure({ files, stateRoot, trimAt = 8000, log = () => {} }) {
  const byRepo = new Map();
  for (const f of [...files].sort()) {
    const repo = repositoryOf(f);
    byRepo.set(repo, [...(byRepo.get(repo) ?? []), f]);
  }
  const groups = [];
  for (const [repo, list] of byRepo) {
    if (list.length < 2) continue;
    const dir = join(stateRoot, `bank-${repo}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const bank = repo.replace(/[^A-Za-z0-9-]+/g, "-");
    const g = { repo, sessions: list.length, requests: 0, withBlock: 0, cuts: 0 };
    Object.assign(g, { cutsWithBlock: 0, used: 0, usedNew: 0, failOpens: 0, examples: [] });
    const records = []; // per cut with a block: its session, the names, the next messages' text
    for (const file of list) {
      const s = loadSession(file);
      const c = await createCompactor({
        sessionId: s.id,
        stateDir: dir,
        embedder: false,
        config: { trimAtTokens: trimAt, memoryBank: bank, compactionRecall: true },
      });
      try {
        for (const req of requests(s.history)) {
          const { messages, stats } = await c.transform(structuredClone(req), { format: "openai" });
          g.requests++;
          if (stats.fail_open) g.failOpens++;
          const memories = recallMemories(messages);
          if (memories) g.withBlock++;
          if (!stats.trimmed) continue;
          g.cuts++;
          if (!memories) continue;
          g.cutsWithBlock++;
          const next = nextAssistants(s.history, req.length);
          const sent = messages.map(messageText).join("\n").replace(BLOCK, "");
          const names = namesIn(memories.join("\n"));
          records.push({ session: s.id, names, next });
          const named = names.filter((n) => uses(next, n));
          if (named.length) g.used++;
          const fresh = named.filter((n) => !uses(sent, n));
          if (fresh.length) {
            g.usedNew++;
            if (g.examples.length < 2) g.examples.push({ session: s.id, names: fresh.slice(0, 4) });
          }
        }
      } finally {
        await c.close();
      }
    }
    g.control = control(records);
    g.memories = await bankKinds(join(dir, "context", "banks", `${bank}.db`));
    rmSync(dir, { recursive: true, force: true });
    log(
      `bank ${repo}: ${g.cutsWithBlock}/${g.cuts} cuts with a block, ${g.used} used, ${g.usedNew} new`,
    );
    groups.push(g);
  }
  const sum = (k) => groups.reduce((a, g) => a + g[k], 0);
  const keys = ["sessions", "requests", "withBlock", "cuts", "cutsWithBlock", "used", "usedNew"];
  keys.push("control");
  const total = Object.fromEntries([...keys, "failOpens"].map((k) => [k, sum(k)]));
  return { trimAt, at: new Date().toISOString().slice(0, 10), groups, total };
}

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(0)}%` : "–");

/** The report's section on the measure. */
export function bankSection(r) {
  const rows = [...r.groups, { repo: "**all**", ...r.total, memories: null }].map((g) => {
    const mem = g.memories ? (g.memories.cut ?? 0) : "";
    return `| ${g.repo} | ${g.sessions} | ${g.requests} | ${g.withBlock} (${pct(g.withBlock, g.requests)}) | ${g.cuts} | ${g.cutsWithBlock} | ${g.used} (${pct(g.used, g.cuts)}) | ${g.usedNew} (${pct(g.usedNew, g.cuts)}) | ${g.control} (${pct(g.control, g.cuts)}) | ${mem} |`;
  });
  const ex = r.groups
    .flatMap((g) => g.examples)
    .slice(0, 3)
    .map((e) => `${e.session}: ${e.names.map((n) => `\`${n}\``).join(", ")}`);
  return [
    BANK_BEGIN,
    "## Memory bank: what cuts teach it",
    "",
    `The real sessions of each repository (tests/data/sessions/swe-traj, those with at least two sessions), replayed one after another in file order through one memory bank per repository, with recall on trim, at trim_at ${r.trimAt}. Each cut writes its memories (files touched with the task, failing commands with their fix, user turns that left) and recalls up to five memories of the *earlier* sessions relevant to the last user turn (a session's own memories are never recalled). *Used*: cuts whose recall block names a file path or identifier (a name with \`/\`, \`_\`, a dot or an inner capital) that the agent's next two recorded assistant messages use; *new*: of those, a name the request as sent did not already contain elsewhere. *Control*: the same test of each block against the next two assistant messages of a cut of *another* session of the repository (names every session uses anyway). Percentages are of all cuts. The recorded sessions were made without any recall, so *used* measures overlap with what the agent did anyway, not influence.`,
    "",
    "| repository | sessions | requests | with a recall block | cuts | cuts with a block | used | new | control | cut memories in the bank |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `All repositories: ${pct(r.total.used, r.total.cuts)} of cuts *used* against ${pct(r.total.control, r.total.cuts)} for the control, ${pct(r.total.usedNew, r.total.cuts)} *new*. Measured ${r.at}. Fail-opens: ${r.total.failOpens}.${ex.length ? ` Examples of new names used: ${ex.join("; ")}.` : ""}`,
    BANK_END,
  ].join("\n");
}

/** `section` in place of the one between the markers, else before `before`, else at the end. */
export function spliceSection(text, section, before = BANK_BEFORE) {
  const a = text.indexOf(BANK_BEGIN);
  const b = text.indexOf(BANK_END);
  if (a >= 0 && b > a) return text.slice(0, a) + section + text.slice(b + BANK_END.length);
  const at = text.indexOf(`\n${before}`);
  if (at >= 0) return `${text.slice(0, at + 1)}${section}\n\n${text.slice(at + 1)}`;
  return `${text.trimEnd()}\n\n${section}\n`;
}

/** Puts the section of `<out>/bank.json` into `<reportDir>/REPORT.md`; false when there is no
 * saved measure. */
export function mergeBankReport({ out, reportDir }) {
  const saved = join(out, "bank.json");
  const reportPath = join(reportDir, "REPORT.md");
  if (!existsSync(saved) || !existsSync(reportPath)) return false;
  const r = JSON.parse(readFileSync(saved, "utf8"));
  writeFileSync(reportPath, spliceSection(readFileSync(reportPath, "utf8"), bankSection(r)));
  return true;
}
