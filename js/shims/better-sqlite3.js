// better-sqlite3 12.x (Node 20; compiles from source where no prebuild is reachable).
import { statementCache, WRITER_PRAGMAS } from "./common.js";

export async function open({ path, readonly = false }) {
  const Database = (await import("better-sqlite3")).default;
  const db = new Database(path, { readonly, fileMustExist: readonly });
  if (!readonly) for (const p of WRITER_PRAGMAS) db.exec(p);
  const st = statementCache((sql) => db.prepare(sql));
  return {
    kind: "better-sqlite3",
    path,
    exec(sql, params) {
      st.get(sql).run(...params);
    },
    query(sql, params) {
      return st
        .get(sql)
        .raw(true)
        .all(...params);
    },
    iterate(sql) {
      const s = db.prepare(sql);
      return { columns: s.columns().map((c) => c.name), rows: s.raw(true).iterate() };
    },
    close() {
      db.close();
    },
  };
}
