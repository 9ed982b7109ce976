// `doctor`: the session stores of the state dir (size, `PRAGMA quick_check` through a read-only
// open that never writes), and the SQLite backend each runtime gets (js/shims/index.js).
import { realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import { defaultBackends, openSqlite } from "../shims/index.js";
import { finding, onPath, readText } from "./doctor-common.js";
import { listSessions } from "./sessions.js";

const MODULES = {
  "bun:sqlite": "bun:sqlite",
  "node:sqlite": "node:sqlite",
  "better-sqlite3": "better-sqlite3",
  "sql.js": "sql.js",
};

/** True when `mod` can be imported here (node:sqlite without its one-time warning). */
async function loads(mod) {
  const emit = process.emitWarning;
  process.emitWarning = function (w, ...rest) {
    if (String(w?.message ?? w).includes("SQLite")) return;
    return emit.call(process, w, ...rest);
  };
  try {
    await import(mod);
    return true;
  } catch {
    return false;
  } finally {
    process.emitWarning = emit;
  }
}

/** The backend `openSqlite` picks in this process: the forced one, else the first that loads. */
export async function cliBackend() {
  const forced = process.env.SMARTER_COMPACT_SQLITE;
  if (forced) return forced;
  for (const kind of defaultBackends()) if (await loads(MODULES[kind])) return kind;
  return null;
}

/** True when better-sqlite3 resolves from this package (what Pi 0.73 on Node 20 would load). */
function betterSqliteNextToUs() {
  try {
    createRequire(import.meta.url).resolve("better-sqlite3");
    return true;
  } catch {
    return false;
  }
}

/** The Pi package version behind a `pi` binary on the PATH, or null. */
function piVersion(binary) {
  if (!binary) return null;
  let dir;
  try {
    dir = dirname(realpathSync(binary));
  } catch {
    return null;
  }
  for (; dirname(dir) !== dir; dir = dirname(dir)) {
    const text = readText(join(dir, "package.json"));
    if (!text) continue;
    try {
      const p = JSON.parse(text);
      if (/pi-coding-agent$/.test(p.name ?? "")) return String(p.version ?? "");
    } catch {
      // not a package.json we can read: keep going up
    }
  }
  return null;
}

/** The version of the `node` a `#!/usr/bin/env node` binary runs with (null when none is found). */
function nodeOnPath() {
  const node = onPath("node");
  if (!node) return null;
  const r = spawnSync(node, ["--version"], { encoding: "utf8", timeout: 5000 });
  return r.status === 0 ? r.stdout.trim().replace(/^v/, "") : null;
}

const hasNodeSqlite = (v) => {
  const [major, minor] = String(v).split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 13);
};

/**
 * Pi's backend: `node:sqlite` for Pi 1.x (Node ≥ 22.19); for Pi 0.73 it follows the Node it
 * runs on (node:sqlite from 22.13, else better-sqlite3 when installed next to us, else sql.js).
 * Returns `{ backend, why }`.
 */
export function piBackend(binary) {
  const version = piVersion(binary);
  if (version && Number(version.split(".")[0]) >= 1)
    return { backend: "node:sqlite", why: `Pi ${version} runs on Node ≥ 22.19` };
  const node = (binary && nodeOnPath()) || process.versions.node;
  const pi = version ? `Pi ${version}` : "Pi (version unknown)";
  if (hasNodeSqlite(node)) return { backend: "node:sqlite", why: `${pi} on Node ${node}` };
  return betterSqliteNextToUs()
    ? { backend: "better-sqlite3", why: `${pi} on Node ${node}, better-sqlite3 installed` }
    : { backend: "sql.js", why: `${pi} on Node ${node}, no better-sqlite3 beside smarter-compact` };
}

/**
 * SQLite 3.44+ also checks FTS tables in quick_check, and a contentless FTS4 table (the stores'
 * `messages_fts`, `lines_fts`: `content=""`) cannot be checked at all: it always answers
 * "unable to validate the inverted index … SQL logic error". That row says nothing about the
 * store and is left out.
 */
function isContentlessNoise(row, contentless) {
  const m =
    /^unable to validate the inverted index for FTS4 table main\.(\w+): SQL logic error$/.exec(row);
  return Boolean(m && contentless.has(m[1]));
}

/** `PRAGMA quick_check` of one store, read-only: `{ ok, error }`. */
async function checkStore(path) {
  let db = null;
  try {
    db = await openSqlite({ path, readonly: true });
    const contentless = new Set(
      db
        .query(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING fts4(%content=\"\"%'",
          [],
        )
        .map((r) => String(r[0])),
    );
    const rows = db
      .query("PRAGMA quick_check", [])
      .map((r) => String(r[0]))
      .filter((row) => !isContentlessNoise(row, contentless));
    return !rows.length || (rows.length === 1 && rows[0] === "ok")
      ? { ok: true, error: null }
      : { ok: false, error: rows.slice(0, 3).join("; ") || "quick_check returned nothing" };
  } catch (e) {
    return { ok: false, error: `${e?.code ? `${e.code}: ` : ""}${e?.message ?? e}`, code: e?.code };
  } finally {
    try {
      db?.close();
    } catch {
      // read-only: nothing to lose
    }
  }
}

/** Every store of the state dir: `{ stores, findings }`. */
export async function checkStores(stateDir) {
  const stores = [];
  const findings = [];
  let sessions;
  try {
    sessions = listSessions(stateDir);
  } catch (e) {
    return {
      stores,
      findings: [finding(null, "store", "fail", e.message, `check the permissions of ${stateDir}`)],
    };
  }
  for (const s of sessions) {
    let bytes = 0;
    try {
      bytes = statSync(s.path).size;
    } catch {
      bytes = 0; // removed meanwhile: the check says so
    }
    const { ok, error, code } = await checkStore(s.path);
    stores.push({ session: s.id, path: s.path, bytes, ok, error });
    if (ok) continue;
    if (code === "E_STORE_WAL")
      findings.push(
        finding(
          null,
          "store",
          "warn",
          `store ${s.id} is being written by a host (${error}); not checked`,
          null,
        ),
      );
    else
      findings.push(
        finding(
          null,
          "store",
          "fail",
          `store ${s.id} (${s.path}, ${bytes} bytes) fails its check: ${error}`,
          `mv ${s.path} ${s.path}.corrupt   (that session starts a fresh store; nothing else is affected)`,
        ),
      );
  }
  const good = stores.filter((s) => s.ok).length;
  const plural = (n) => `${n} session store${n === 1 ? "" : "s"}`;
  if (!sessions.length)
    findings.unshift(
      finding(
        null,
        "store",
        "ok",
        `no session stores yet in ${join(stateDir, "context", "sessions")}`,
      ),
    );
  else if (good)
    findings.unshift(
      finding(
        null,
        "store",
        "ok",
        good === sessions.length
          ? `${plural(good)} ${good === 1 ? "passes" : "pass"} PRAGMA quick_check`
          : `${plural(good)} of ${sessions.length} pass PRAGMA quick_check`,
      ),
    );
  return { stores, findings };
}
