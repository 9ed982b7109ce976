// Pieces shared by the SQLite shims.
import { existsSync } from "node:fs";
import { codedError } from "../errors.js";

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
export const WRITER_PRAGMAS = [
  "PRAGMA journal_mode = WAL",
  "PRAGMA busy_timeout = 2000",
  "PRAGMA synchronous = NORMAL",
];

/** A read-only open needs the file: E_NO_SESSION when it is missing (a reader never creates a
 * store, not even an empty one). */
export function mustExist(path) {
  if (!existsSync(path))
    throw codedError(
      "E_NO_SESSION",
      `no session store at ${path} (a read-only open never creates one)`,
    );
}
