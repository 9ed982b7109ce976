// bun:sqlite (OpenCode's CLI runs plugins under Bun).
import { statementCache, WRITER_PRAGMAS } from "./common.js";

export async function open({ path, readonly = false }) {
  const { Database } = await import("bun:sqlite");
  const db = readonly
    ? new Database(path, { readonly: true })
    : new Database(path, { create: true, readwrite: true });
  if (!readonly) for (const p of WRITER_PRAGMAS) db.exec(p);
  const st = statementCache((sql) => db.prepare(sql));
  return {
    kind: "bun:sqlite",
    path,
    exec(sql, params) {
      st.get(sql).run(...params);
    },
    query(sql, params) {
      return st.get(sql).values(...params);
    },
    /** Column names and an iterator of rows as arrays, for the read-only runner. */
    iterate(sql) {
      const s = db.prepare(sql);
      const columns = s.columnNames;
      // Rows as objects lose columns with the same name; fall back to values() then.
      if (new Set(columns).size < columns.length || typeof s.iterate !== "function")
        return { columns, rows: s.values()[Symbol.iterator]() };
      return {
        columns,
        rows: (function* () {
          for (const r of s.iterate()) yield Object.values(r);
        })(),
      };
    },
    close() {
      db.close();
    },
  };
}
