// The SQL tool's runner on the host side: the engine's guard has already checked the statement;
// here it runs in a child process on a read-only connection, with a deadline and caps.
//
// The deadline counts the query only. The child first boots a runtime and loads a SQLite
// backend (hundreds of ms for sql.js's wasm, much more on a loaded machine); it prints READY once
// the database is open and the query is about to run, and the deadline starts there. Before
// READY a separate, generous start-up bound applies, with its own error.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { codedError } from "./errors.js";
import { STOP_PREFIX } from "./sql-watchdog.js";

const RUNNER = fileURLToPath(new URL("./sql-runner.js", import.meta.url));
/** Default deadline of one query, counted from the runner's READY line. */
export const SQL_TIMEOUT_MS = 5000;
/** Default bound on the runner's start-up (spawn to READY: runtime boot, backend load, open). */
export const SQL_STARTUP_MS = 60000;
/** The line the runner prints on stdout before it runs the query. */
export const READY_LINE = "READY\n";
/** Default memory a query may use: how far the runner may grow over its size at READY. */
export const SQL_MEMORY_BYTES = 512 * 2 ** 20;
/** The runner's JS heap cap under Node, in MB (rows and cells are bounded far below it). */
const V8_HEAP_MB = 1024;
/** Largest answer accepted from the child. */
const MAX_STDOUT = 16 * 1024 * 1024;
/** Most stderr kept from the child (where its watchdog says why it stopped). */
const MAX_STDERR = 64 * 1024;

/** The watchdog's `{code, error}` from the child's stderr, or null. */
function stopped(stderr) {
  const line = stderr.split("\n").find((l) => l.startsWith(STOP_PREFIX));
  if (!line) return null;
  try {
    return JSON.parse(line.slice(STOP_PREFIX.length));
  } catch {
    return null;
  }
}

/** Runs a checked statement read-only; resolves to {columns, rows, truncated}. */
export function runReadonlySql({
  kind,
  path,
  sql,
  maxRows,
  timeoutMs = SQL_TIMEOUT_MS,
  startupMs = SQL_STARTUP_MS,
  memoryBytes = SQL_MEMORY_BYTES,
}) {
  return new Promise((resolve, reject) => {
    // The host's own runtime runs the child: Node, Bun, a Bun-compiled app such as OpenCode
    // (BUN_BE_BUN makes it act as bun), or Electron (ELECTRON_RUN_AS_NODE makes it act as node).
    // Node's flags only under Node: Bun and a Bun-compiled host take no V8 options.
    const heap = process.versions.bun ? [] : [`--max-old-space-size=${V8_HEAP_MB}`];
    const child = spawn(process.execPath, [...heap, RUNNER], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: "1", BUN_BE_BUN: "1" },
    });
    const out = [];
    let size = 0;
    let why = null;
    let ready = false;
    const stop = (reason) => {
      why ??= reason;
      child.kill("SIGKILL");
    };
    let timer = setTimeout(
      () => stop(`the query runner did not start within ${startupMs} ms and was stopped`),
      startupMs,
    );
    child.stdout.on("data", (c) => {
      size += c.length;
      if (size > MAX_STDOUT) return stop("the result is too large");
      out.push(c);
      if (ready) return;
      const head = Buffer.concat(out);
      if (head.length < READY_LINE.length) return;
      if (head.subarray(0, READY_LINE.length).toString("utf8") !== READY_LINE) {
        ready = true; // no READY line (an error before the query): the answer is all there is
        clearTimeout(timer);
        return;
      }
      ready = true;
      out.length = 0;
      out.push(head.subarray(READY_LINE.length));
      clearTimeout(timer);
      timer = setTimeout(
        () => stop(`the query ran longer than ${timeoutMs} ms and was stopped`),
        timeoutMs,
      );
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c) => {
      if (stderr.length < MAX_STDERR) stderr += c;
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(codedError("E_SQL", `could not start the query runner: ${e.message}`, e));
    });
    child.on("close", () => {
      clearTimeout(timer);
      if (why) return reject(codedError("E_SQL", why));
      const stop = stopped(stderr);
      if (stop) return reject(codedError(stop.code ?? "E_SQL", stop.error));
      let res;
      try {
        res = JSON.parse(Buffer.concat(out).toString("utf8"));
      } catch {
        return reject(
          codedError("E_SQL", "the query runner stopped without an answer (out of memory?)"),
        );
      }
      if (res.error) return reject(codedError(res.code ?? "E_SQL", res.error));
      resolve(res);
    });
    child.stdin.end(JSON.stringify({ kind, path, sql, maxRows, timeoutMs, memoryBytes }));
  });
}
