// node:sqlite (Node >= 22.13; Pi 1.x runs on Node >= 22.19).
import { statementCache, WRITER_PRAGMAS } from "./common.js";

/** Imports node:sqlite without its one-time ExperimentalWarning on the host's stderr. */
async function importQuietly() {
  const emit = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (String(warning?.message ?? warning).includes("SQLite")) return;
    return emit.call(process, warning, ...rest);
  };
  try {
    return await import("node:sqlite");
  } finally {
    process.emitWarning = emit;
  }
}

export async function open({ path, readonly = false }) {
  const { DatabaseSync } = await importQuietly();
  const db = new DatabaseSync(path, { readOnly: readonly });
  if (!readonly) for (const p of WRITER_PRAGMAS) db.exec(p);
  const st = statementCache((sql) => {
    const s = db.prepare(sql);
    if (typeof s.setReturnArrays === "function") s.setReturnArrays(true);
    return s;
  });
  return {
    kind: "node:sqlite",
    path,
    exec(sql, params) {
      st.get(sql).run(...params);
    },
    query(sql, params) {
      const rows = st.get(sql).all(...params);
      return rows.length && !Array.isArray(rows[0]) ? rows.map((r) => Object.values(r)) : rows;
    },
    iterate(sql) {
      const s = db.prepare(sql);
      if (typeof s.setReturnArrays === "function") s.setReturnArrays(true);
      const columns = typeof s.columns === "function" ? s.columns().map((c) => c.name) : null;
      const it = s.iterate();
      let first = null;
      const rows = (function* () {
        for (const r of it) yield Array.isArray(r) ? r : Object.values(r);
      })();
      if (columns) return { columns, rows };
      // Older Node: names come from the first row's keys.
      first = it.next();
      const names = first.done ? [] : Object.keys(first.value);
      return {
        columns: names,
        rows: (function* () {
          if (!first.done) yield Object.values(first.value);
          for (const r of it) yield Object.values(r);
        })(),
      };
    },
    close() {
      db.close();
    },
  };
}
