// Pieces the `doctor` checks share: a finding, reading a config file without ever throwing (a
// file that cannot be read or parsed is a finding, not a crash), finding a binary on the PATH,
// and the rival context plugins recognised by name.
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { parse, printParseErrorCode } from "jsonc-parser";

/** One line of the report: `status` is "ok", "warn" or "fail"; `fix` a command or an edit. */
export function finding(host, check, status, message, fix = null) {
  return { host, check, status, message, fix };
}

/** `~` and `~/…` under the home directory. */
export const expandHome = (p) =>
  p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p;

/** An environment variable, with an empty value taken as unset. */
export const envVar = (name) => process.env[name] || undefined;

/** True when `p` is a directory. */
export function isDir(p) {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Reads a JSON (`jsonc: true`: comments and trailing commas allowed) config file that must hold
 * an object. Returns `{ value }` (null when the file does not exist) or `{ error }`: a reason
 * ready for "cannot read <file>: <reason>".
 */
export function readConfigObject(file, { jsonc = false } = {}) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return { value: null };
    return { error: e.message };
  }
  text = text.replace(/^\uFEFF/, "");
  let value;
  if (jsonc) {
    const errors = [];
    value = parse(text, errors, { allowTrailingComma: true });
    if (errors.length) {
      const { error, offset } = errors[0];
      const line = text.slice(0, offset).split("\n").length;
      return { error: `${printParseErrorCode(error)} at line ${line}` };
    }
  } else {
    if (!text.trim()) return { value: {} }; // Pi treats an empty settings file as no settings
    try {
      value = JSON.parse(text);
    } catch (e) {
      return { error: e.message };
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { error: "not a JSON object" };
  return { value };
}

/** A file's text, or null when it is missing or unreadable. */
export function readText(file) {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * The directories searched for host binaries: SMARTER_COMPACT_DOCTOR_PATH when it is set (an
 * empty value: none, so only config directories count), else PATH.
 */
function searchPath() {
  const own = process.env.SMARTER_COMPACT_DOCTOR_PATH;
  const path = own !== undefined ? own : (process.env.PATH ?? "");
  return path.split(delimiter).filter(Boolean);
}

/** The first executable `name` on the search path, or null. */
export function onPath(name) {
  for (const dir of searchPath()) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      if (!isDir(p)) return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Context plugins that rewrite or compact the same history smarter-compact trims: two of them
 * on one session undo each other's cuts and break the prompt cache. Matched as a fragment of
 * a package name or path (lower case). npm names checked: @tarquinen/opencode-dcp (DCP, forks
 * keep "opencode-dcp" or "dynamic-context-pruning"), @cortexkit/opencode-magic-context,
 * opencode-headroom and @ryan_nookpi/pi-extension-headroom, @skybluejacket/opencode-context-compress,
 * pi-agentic-compaction; pi-vcc and lean-ctx by their project names.
 */
export const RIVALS = [
  ["opencode-dcp", "DCP (dynamic context pruning)"],
  ["dynamic-context-pruning", "DCP (dynamic context pruning)"],
  ["magic-context", "Magic Context"],
  ["pi-vcc", "pi-vcc"],
  ["lean-ctx", "lean-ctx"],
  ["headroom", "Headroom"],
  ["context-compress", "opencode-context-compress"],
  ["agentic-compaction", "pi-agentic-compaction"],
];

/** The rival a plugin entry names, as `{ fragment, label }`, or null. */
export function rivalOf(entry) {
  const s = String(entry).toLowerCase();
  if (s.includes("smarter-compact")) return null;
  const hit = RIVALS.find(([fragment]) => s.includes(fragment));
  return hit ? { fragment: hit[0], label: hit[1] } : null;
}

/** True when `dir` holds a package.json whose name is `name`. */
export function isPackageDir(dir, name) {
  if (!existsSync(join(dir, "package.json"))) return false;
  try {
    return JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))?.name === name;
  } catch {
    return false;
  }
}
