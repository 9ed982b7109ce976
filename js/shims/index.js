// Picks a SQLite backend at run time: bun:sqlite under Bun, node:sqlite on Node >= 22.13, then
// better-sqlite3 if installed, then sql.js (always there). SMARTER_COMPACT_SQLITE or the
// `backend` option forces one; a host may also pass its own shim object.
import { codedError } from "../errors.js";
import { mustExist } from "./common.js";

/** Backend names in the order they are tried. */
export const BACKENDS = ["bun:sqlite", "node:sqlite", "better-sqlite3", "sql.js"];

const OPENERS = {
  "bun:sqlite": () => import("./bun.js"),
  "node:sqlite": () => import("./node-sqlite.js"),
  "better-sqlite3": () => import("./better-sqlite3.js"),
  "sql.js": () => import("./sqljs.js"),
};

function nodeHasSqlite() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 13);
}

/** The backends worth trying in this runtime, best first. */
export function defaultBackends() {
  if (globalThis.Bun) return ["bun:sqlite", "sql.js"];
  return [...(nodeHasSqlite() ? ["node:sqlite"] : []), "better-sqlite3", "sql.js"];
}

/** Opens a SQLite database file with the first backend that loads. A backend that cannot be
 * loaded is skipped; a database that cannot be opened is an E_STORE error. `readonly` opens an
 * existing file to read it only (E_NO_SESSION when it is missing; nothing is ever written, and
 * sql.js refuses with E_STORE_WAL a file whose `-wal` another process is writing). */
export async function openSqlite({
  path,
  backend = process.env.SMARTER_COMPACT_SQLITE,
  readonly = false,
} = {}) {
  if (backend && !OPENERS[backend])
    throw codedError(
      "E_ARG",
      `unknown SQLite backend ${JSON.stringify(backend)}; one of ${BACKENDS.join(", ")}`,
    );
  if (readonly) mustExist(path);
  const skipped = [];
  for (const kind of backend ? [backend] : defaultBackends()) {
    let mod;
    try {
      mod = await OPENERS[kind]();
      const shim = await mod.open({ path, readonly });
      return shim;
    } catch (e) {
      // The shim's own coded refusal first: its message may name other backends (E_STORE_WAL's
      // advice mentions bun:sqlite), which must not read as "this backend is not installed".
      if (typeof e?.code === "string" && e.code.startsWith("E_")) throw e;
      const missing =
        e?.code === "ERR_MODULE_NOT_FOUND" ||
        e?.code === "ERR_UNKNOWN_BUILTIN_MODULE" ||
        /Cannot find (package|module)|No such built-in module|bun:sqlite/.test(String(e?.message));
      if (missing && !backend) {
        skipped.push(`${kind}: ${e.message}`);
        continue;
      }
      throw codedError("E_STORE", `cannot open ${path} with ${kind}: ${e.message}`, e);
    }
  }
  throw codedError("E_STORE", `no SQLite backend could be loaded (${skipped.join("; ")})`);
}
