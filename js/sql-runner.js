// Child process of the SQL tool: runs one checked read-only query on its own read-only
// connection and prints {columns, rows, truncated} (or {error}) as JSON. Running it in a child
// is what bounds it: none of the JS SQLite backends exposes a progress handler or an
// interrupt, so the parent kills this process at the deadline, and a watchdog thread inside it
// (js/sql-watchdog.js) stops it at the deadline too, past its memory bound, or when its parent
// is gone. It prints READY (a line) on stdout once the database is open, just before the query:
// the deadlines start there. SQLite's hard_heap_limit is set as well, though of the four
// backends only sql.js's build enforces it (the others are built with SQLITE_DEFAULT_MEMSTATUS=0
// or ignore it): the watchdog's bound is the one that holds everywhere.
// SMARTER_COMPACT_SQL_START_DELAY_MS (tests only) delays the start, as a loaded machine does.
import { Worker } from "node:worker_threads";
import { openSqlite } from "./shims/index.js";
import { SQL_MEMORY_BYTES, SQL_TIMEOUT_MS } from "./sql.js";

/** Slack of the runner's own deadline over the parent's, so that normally the parent stops it. */
const GRACE_MS = 1000;
// First of all, so that a runner whose parent dies while it starts stops too.
const watchdog = new Worker(new URL("./sql-watchdog.js", import.meta.url), {
  workerData: { ppid: process.ppid, graceMs: GRACE_MS },
});
watchdog.unref();

const delay = Number(process.env.SMARTER_COMPACT_SQL_START_DELAY_MS ?? 0);
if (delay > 0) await new Promise((r) => setTimeout(r, delay));

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const {
  kind,
  path,
  sql,
  maxRows,
  timeoutMs = SQL_TIMEOUT_MS,
  memoryBytes = SQL_MEMORY_BYTES,
} = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const cell = (v) => {
  if (v instanceof Uint8Array) return `<blob ${v.length} bytes>`;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  return v ?? null;
};

let out;
try {
  const db = await openSqlite({ path, backend: kind, readonly: true });
  for (const p of ["PRAGMA query_only = 1", "PRAGMA hard_heap_limit = 268435456"]) {
    try {
      db.query(p, []);
    } catch {
      // older SQLite without the pragma: the guard and the deadline still hold
    }
  }
  watchdog.postMessage({ timeoutMs, memoryBytes });
  process.stdout.write("READY\n");
  const { columns, rows } = db.iterate(sql);
  const taken = [];
  let truncated = false;
  for (const r of rows) {
    if (taken.length === maxRows) {
      truncated = true;
      break;
    }
    taken.push(Array.from(r, cell));
  }
  out = { columns, rows: taken, truncated };
} catch (e) {
  // A coded refusal to open (E_NO_SESSION, E_STORE_WAL) keeps its code; a failed query is E_SQL.
  const code = typeof e?.code === "string" && e.code.startsWith("E_") ? e.code : undefined;
  out = { error: String(e?.message ?? e), code };
}
process.stdout.write(JSON.stringify(out));
