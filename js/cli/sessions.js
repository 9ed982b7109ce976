// The sessions of a state directory as the command line and the MCP server see them: listing,
// the default session, and opening an existing one (never creating an empty store by mistake).
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
import { createCompactor, openSqlite, sessionPath } from "../index.js";

/** `<state dir>/context/sessions`. */
export function sessionsDir(stateDir) {
  return join(stateDir, "context", "sessions");
}

/** Last write to a session: the newest mtime of its database and its WAL. */
function lastWrite(dbPath) {
  let t = 0;
  for (const p of [dbPath, `${dbPath}-wal`]) {
    try {
      t = Math.max(t, statSync(p).mtimeMs);
    } catch {
      // no WAL (sql.js, or checkpointed and removed)
    }
  }
  return t;
}

/**
 * When a session last had a request (ms), from its own `requests` table; null if it has none or
 * cannot be read. File times are no good for this: merely opening and closing a store (a
 * `status`, a tool call) touches them.
 */
export async function lastRequestAt(dbPath) {
  let db = null;
  try {
    db = await openSqlite({ path: dbPath, readonly: true });
    const v = db.query("SELECT max(at_ms) FROM requests", [])[0]?.[0];
    return v == null ? null : Number(v);
  } catch {
    return null;
  } finally {
    try {
      db?.close?.();
    } catch {
      // read-only: nothing to lose
    }
  }
}

/** The sessions of a state dir by file time, newest first: `[{ id, path, mtimeMs }]`. */
export function listSessions(stateDir) {
  const dir = sessionsDir(stateDir);
  let names;
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (e.code === "ENOENT") return [];
    throw codedError("E_STORE", `cannot read ${dir}: ${e.message}`, e);
  }
  return names
    .filter((n) => n.endsWith(".db") && n.length > 3)
    .map((n) => {
      const path = join(dir, n);
      return { id: n.slice(0, -3), path, mtimeMs: lastWrite(path) };
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs || a.id.localeCompare(b.id));
}

/**
 * The session a command works on: the explicit one, else SMARTER_COMPACT_SESSION, else the most
 * recently written session of the state dir. E_NO_SESSION when there is none.
 */
export async function defaultSession(stateDir, explicit) {
  const id = explicit || process.env.SMARTER_COMPACT_SESSION;
  if (id) return id;
  const newest = await newestSession(stateDir);
  if (!newest)
    throw codedError(
      "E_NO_SESSION",
      `no sessions yet in ${sessionsDir(stateDir)}; pass a session id`,
    );
  return newest;
}

/**
 * The id of the session with the latest request (null when there is none). A file is written
 * after the request it records, so its mtime bounds its last request from above: going through
 * the files newest first, the search stops at the first file older than the best request found.
 */
export async function newestSession(stateDir) {
  const files = listSessions(stateDir);
  let best = null;
  let bestAt = -1;
  for (const f of files) {
    if (bestAt >= 0 && f.mtimeMs < bestAt) break;
    const at = await lastRequestAt(f.path);
    if (at !== null && at > bestAt) {
      best = f.id;
      bestAt = at;
    }
  }
  return best ?? files[0]?.id ?? null; // no requests anywhere yet: the newest file
}

/**
 * Opens the read-only compactor of an existing session (its id validated first). A session with
 * no database is E_NO_SESSION: reading tools must not create an empty store, nor write one.
 */
export async function openSession(stateDir, sessionId) {
  const dir = resolveStateDir(stateDir);
  const c = await createCompactor({ sessionId, stateDir: dir, readonly: true }); // E_BAD_ID for an unusable id
  if (!existsSync(sessionPath(dir, sessionId))) {
    await c.close();
    throw codedError(
      "E_NO_SESSION",
      `no session ${JSON.stringify(sessionId)} in ${sessionsDir(dir)}`,
    );
  }
  return c;
}

/** Runs `fn(compactor)` on an existing session and closes it whatever happens. */
export async function withSession(stateDir, sessionId, fn) {
  const c = await openSession(stateDir, sessionId);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}
