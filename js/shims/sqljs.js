// sql.js: SQLite compiled to wasm, works everywhere. The database lives in memory and is written
// to its file by export: debounced after writes, and at once on close and on process exit. A
// crash loses at most the writes of the last DEBOUNCE_MS; two processes on one session file
// overwrite each other's exports (use a native backend for that).
//
// Read-only, the file is loaded into memory and never exported or written. sql.js reads only the
// database file, never its `-wal`: a store another process is writing in WAL mode (node:sqlite,
// bun:sqlite, better-sqlite3 all do) has its recent writes there, so such a store is refused
// with E_STORE_WAL rather than shown without them. (sql.js cannot apply the WAL: its in-memory
// file system is not exposed, so the `-wal` cannot be put beside the database it opens.)
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { codedError } from "../errors.js";
import { mustExist, statementCache } from "./common.js";

/** Delay between the last write and the export to the file. */
export const DEBOUNCE_MS = 1000;

let sqlJs = null;
const open_ = new Set();
let exitHook = false;

/** E_STORE_WAL when another process has written to `<path>-wal` (a WAL-mode writer is live, or
 * one stopped before merging its WAL into the file). */
function refuseWal(path) {
  let size = 0;
  try {
    size = statSync(`${path}-wal`).size;
  } catch {
    return; // no WAL beside the file
  }
  if (size > 0) {
    throw codedError(
      "E_STORE_WAL",
      `${path}-wal holds ${size} bytes of writes by another process (SQLite WAL mode), which sql.js cannot read: it sees only ${path}. ` +
        "Read this store with a backend that reads the WAL (Node >= 22.13 for node:sqlite, Bun for bun:sqlite, or install better-sqlite3; SMARTER_COMPACT_SQLITE picks one), " +
        "or wait until the writer has closed the session (its WAL is then merged into the file).",
    );
  }
}

/** The database file's bytes for a read-only open: checked for a live WAL before and after
 * reading, so a writer that starts meanwhile is caught too. */
function readForReading(path) {
  mustExist(path);
  refuseWal(path);
  const bytes = readFileSync(path);
  refuseWal(path);
  return bytes;
}

export async function open({ path, readonly = false }) {
  const initSqlJs = (await import("sql.js")).default;
  sqlJs ??= initSqlJs();
  const SQL = await sqlJs;
  const bytes = readonly ? readForReading(path) : existsSync(path) ? readFileSync(path) : null;
  const db = bytes ? new SQL.Database(bytes) : new SQL.Database();
  db.exec("PRAGMA foreign_keys = OFF");
  if (readonly) db.exec("PRAGMA query_only = 1"); // even the in-memory copy refuses writes
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
  if (readonly) return shim; // nothing to write on exit
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
