// sql.js: SQLite compiled to wasm, works everywhere. The database lives in memory and is written
// to its file by export: debounced after writes, and at once on close and on process exit. A
// crash loses at most the writes of the last DEBOUNCE_MS; two processes on one session file
// overwrite each other's exports (use a native backend for that).
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { statementCache } from "./common.js";

/** Delay between the last write and the export to the file. */
export const DEBOUNCE_MS = 1000;

let sqlJs = null;
const open_ = new Set();
let exitHook = false;

export async function open({ path, readonly = false }) {
  const initSqlJs = (await import("sql.js")).default;
  sqlJs ??= initSqlJs();
  const SQL = await sqlJs;
  const db = existsSync(path) ? new SQL.Database(readFileSync(path)) : new SQL.Database();
  db.exec("PRAGMA foreign_keys = OFF");
  const st = statementCache((sql) => db.prepare(sql));
  let dirty = false;
  let timer = null;
  const shim = {
    kind: "sql.js",
    path,
    /** Milliseconds the last export took (what persistence costs). */
    lastExportMs: 0,
    exec(sql, params) {
      const s = st.get(sql);
      s.bind(params);
      while (s.step());
      s.reset();
      if (!readonly) {
        dirty = true;
        if (!timer) {
          timer = setTimeout(() => shim.flush(), DEBOUNCE_MS);
          timer.unref?.();
        }
      }
    },
    query(sql, params) {
      const s = st.get(sql);
      s.bind(params);
      const rows = [];
      while (s.step()) rows.push(s.get());
      s.reset();
      return rows;
    },
    iterate(sql) {
      const s = db.prepare(sql);
      return {
        columns: s.getColumnNames(),
        rows: (function* () {
          try {
            while (s.step()) yield s.get();
          } finally {
            s.free();
          }
        })(),
      };
    },
    /** Writes the database to its file now (atomically: temp file, then rename). */
    flush() {
      clearTimeout(timer);
      timer = null;
      if (!dirty || readonly) return;
      const t0 = performance.now();
      const bytes = db.export(); // frees prepared statements and resets pragmas
      st.clear();
      writeFileSync(`${path}.tmp`, bytes);
      renameSync(`${path}.tmp`, path);
      dirty = false;
      shim.lastExportMs = performance.now() - t0;
    },
    close() {
      try {
        shim.flush();
      } finally {
        open_.delete(shim);
        db.close();
      }
    },
  };
  open_.add(shim);
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const s of open_) {
        try {
          s.flush();
        } catch {
          // nothing more can be done while the process exits
        }
      }
    });
  }
  return shim;
}
