// `smarter-compact status`: every session of the state dir as a table, or one session's status.
import { resolveStateDir } from "../config.js";
import { embeddingsState } from "../embedder-package.js";
import { createCompactor } from "../index.js";
import { lastRequestAt, listSessions, sessionsDir, withSession } from "./sessions.js";

const k = (n) =>
  n == null
    ? "—"
    : n >= 1_000_000
      ? `${(n / 1e6).toFixed(1)}M`
      : n >= 1000
        ? `${(n / 1000).toFixed(1)}k`
        : String(n);
const pad = (n) => String(n).padStart(2, "0");

/** A local time a person reads: 2026-11-30 07:52. */
export function localTime(ms) {
  if (!ms) return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Percentage of tokens saved, or null when nothing was sent. */
export function savedPct(usage) {
  if (!usage?.before_tokens) return null;
  return Math.round((1000 * (usage.before_tokens - usage.after_tokens)) / usage.before_tokens) / 10;
}

/** One row of the table, from a session's status. */
function row(s, mtimeMs) {
  const u = s.usage ?? {};
  return {
    session: s.session_id,
    messages: s.messages ?? null,
    trims: s.trims ?? null,
    requests: u.requests ?? null,
    before_tokens: u.before_tokens ?? null,
    after_tokens: u.after_tokens ?? null,
    saved_pct: savedPct(u),
    fail_opens: s.fail_opens ?? 0,
    last_activity: mtimeMs ? new Date(mtimeMs).toISOString() : null,
    store_error: s.store?.ok === false ? s.store.error : null,
  };
}

/** Renders rows as an aligned table. */
export function renderTable(rows) {
  const head = [
    "session",
    "messages",
    "trims",
    "requests",
    "tokens before→after",
    "saved",
    "fail-opens",
    "last activity",
  ];
  const cells = rows.map((r) =>
    [
      r.session,
      r.messages ?? "—",
      r.trims ?? "—",
      r.requests ?? "—",
      `${k(r.before_tokens)} → ${k(r.after_tokens)}`,
      r.saved_pct == null ? "—" : `${r.saved_pct.toFixed(1)}%`,
      r.fail_opens,
      r.last_activity ? localTime(Date.parse(r.last_activity)) : "—",
    ].map(String),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) =>
    c
      .map((v, i) => (i === 0 || i === c.length - 1 ? v.padEnd(widths[i]) : v.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  const out = [line(head), ...cells.map(line)];
  for (const r of rows)
    if (r.store_error)
      out.push(
        `  ${r.session}: store not available (${r.store_error.code}: ${r.store_error.message})`,
      );
  return out.join("\n");
}

/** The status of every session of a state dir, latest activity first. */
export async function allStatuses(stateDir) {
  const rows = [];
  for (const s of listSessions(stateDir)) {
    const c = await createCompactor({ sessionId: s.id, stateDir, readonly: true }).catch(
      () => null,
    );
    if (!c) continue; // a file whose name is not a session id: not ours
    try {
      rows.push(row(await c.status(), (await lastRequestAt(s.path)) ?? s.mtimeMs));
    } finally {
      await c.close();
    }
  }
  return rows.sort(
    (a, b) =>
      (b.last_activity ?? "").localeCompare(a.last_activity ?? "") ||
      a.session.localeCompare(b.session),
  );
}

/** Whether this install has the embedder, for `--json`: `{ on, line, package_dir }`. */
async function embeddings() {
  const e = await embeddingsState();
  return { on: e.on, line: e.line, package_dir: e.package?.dir ?? null };
}

/** `status [--session ID] [--json]`: read-only; exit 1 when a store could not be read (what it
 * says instead of figures is why). The last line says whether embeddings are on, and from where. */
export async function statusCommand({ session, json, stateDir: explicit }, out) {
  const stateDir = resolveStateDir(explicit);
  if (session) {
    const s = await withSession(stateDir, session, (c) => c.status());
    const e = await embeddings();
    if (json) out(JSON.stringify({ ...s, embeddings: e }, null, 2));
    else out(`${s.text}\n${e.line}`);
    return s.store?.ok === false ? 1 : 0;
  }
  const rows = await allStatuses(stateDir);
  const e = await embeddings();
  if (json) out(JSON.stringify({ state_dir: stateDir, sessions: rows, embeddings: e }, null, 2));
  else {
    if (!rows.length) out(`no sessions yet in ${sessionsDir(stateDir)}`);
    else {
      out(`smarter-compact sessions in ${sessionsDir(stateDir)}`);
      out(renderTable(rows));
    }
    out(e.line);
  }
  return rows.some((r) => r.store_error) ? 1 : 0;
}
