// The SQL tool's runner on the host side: the engine's guard has already checked the statement;
// here it runs in a child process on a read-only connection, with a deadline and caps.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { codedError } from "./errors.js";

const RUNNER = fileURLToPath(new URL("./sql-runner.js", import.meta.url));
/** Default deadline of one query. */
export const SQL_TIMEOUT_MS = 5000;
/** Largest answer accepted from the child. */
const MAX_STDOUT = 16 * 1024 * 1024;

/** Runs a checked statement read-only; resolves to {columns, rows, truncated}. */
export function runReadonlySql({ kind, path, sql, maxRows, timeoutMs = SQL_TIMEOUT_MS }) {
  return new Promise((resolve, reject) => {
    // The host's own runtime runs the child: Node, Bun, a Bun-compiled app such as OpenCode
    // (BUN_BE_BUN makes it act as bun), or Electron (ELECTRON_RUN_AS_NODE makes it act as node).
    const child = spawn(process.execPath, [RUNNER], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: "1", BUN_BE_BUN: "1" },
    });
    const out = [];
    let size = 0;
    let why = null;
    const stop = (reason) => {
      why ??= reason;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(`the query ran longer than ${timeoutMs} ms and was stopped`), timeoutMs);
    child.stdout.on("data", (c) => {
      size += c.length;
      if (size > MAX_STDOUT) stop("the result is too large");
      else out.push(c);
    });
    child.stderr.resume();
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(codedError("E_SQL", `could not start the query runner: ${e.message}`, e));
    });
    child.on("close", () => {
      clearTimeout(timer);
      if (why) return reject(codedError("E_SQL", why));
      let res;
      try {
        res = JSON.parse(Buffer.concat(out).toString("utf8"));
      } catch {
        return reject(codedError("E_SQL", "the query runner stopped without an answer (out of memory?)"));
      }
      if (res.error) return reject(codedError("E_SQL", res.error));
      resolve(res);
    });
    child.stdin.end(JSON.stringify({ kind, path, sql, maxRows }));
  });
}
