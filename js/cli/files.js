// Reading and writing the user's config files: a missing file reads as null, and a write is
// atomic (a temp file beside it, then a rename) and keeps the file's mode.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { codedError } from "../errors.js";

/** The file's text, or null when it does not exist; any other failure is E_CONFIG. */
export function readIfThere(file) {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return null;
    throw codedError("E_CONFIG", `cannot read ${file}: ${e.message}`, e);
  }
}

/** Writes `text` to `file` atomically, creating its folder and keeping its mode. */
export function writeAtomic(file, text) {
  let mode;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    mode = undefined;
  }
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.smarter-compact-${process.pid}.tmp`;
  writeFileSync(tmp, text, mode === undefined ? undefined : { mode });
  renameSync(tmp, file);
}
