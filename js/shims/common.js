// Pieces shared by the SQLite shims.

/** A prepared-statement cache: `prepare(sql)` once per distinct SQL text. */
export function statementCache(prepare) {
  const cache = new Map();
  return {
    get(sql) {
      let st = cache.get(sql);
      if (!st) {
        st = prepare(sql);
        cache.set(sql, st);
      }
      return st;
    },
    clear() {
      cache.clear();
    },
  };
}

/** Pragmas every writable connection gets: WAL so readers never block the writer, and a busy
 * timeout so a second process waits for the lock instead of failing at once. */
export const WRITER_PRAGMAS = ["PRAGMA journal_mode = WAL", "PRAGMA busy_timeout = 2000", "PRAGMA synchronous = NORMAL"];
