// Read-only opens of a session that does not exist, on one SQLite backend in this runtime (the
// read-only tests run it under Node 20, Node 22 and Bun): through openSqlite, through the
// backend's shim module alone (its own refusal, without openSqlite's check) and through a
// read-only compactor. Prints one JSON line with how each failed and the files left behind.
//
// usage: <runtime> open-missing.mjs <empty state dir> <backend>
import { existsSync, readdirSync } from "node:fs";
import { createCompactor, openSqlite, sessionPath } from "../../../npm/js/index.js";

const [stateDir, backend] = process.argv.slice(2);
const path = sessionPath(stateDir, "nosuch");
const shim = await openSqlite({ path, backend, readonly: true }).then(
  () => "opened",
  (e) => e.code,
);
const MODULES = {
  "bun:sqlite": "bun.js",
  "node:sqlite": "node-sqlite.js",
  "better-sqlite3": "better-sqlite3.js",
  "sql.js": "sqljs.js",
};
const mod = await import(`../../../npm/js/shims/${MODULES[backend]}`);
const direct = await mod.open({ path, readonly: true }).then(
  () => "opened",
  () => "refused",
);
const c = await createCompactor({
  sessionId: "nosuch",
  stateDir,
  sqlite: backend,
  embedder: false,
  readonly: true,
});
const status = await c.status();
const search = await c.search("anything", { mode: "fts" }).then(
  () => "answered",
  (e) => e.code,
);
await c.close();
process.stdout.write(
  `${JSON.stringify({ shim, direct, status: status.store.error?.code ?? "ok", search, exists: existsSync(path), left: readdirSync(stateDir) })}\n`,
);
