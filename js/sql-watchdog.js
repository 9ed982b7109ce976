// Worker thread of the SQL tool's runner (js/sql-runner.js). The runner's own thread is blocked
// inside SQLite while the query runs (no JS backend exposes a progress handler or an
// interrupt), so this thread bounds it from inside the child process, whatever its parent does:
// - the deadline: the query may run `timeoutMs` (+ a grace, so the parent's kill comes first);
// - memory: the process may grow `memoryBytes` over its size when the query started (the
//   resident set, so SQLite's own allocations count, not only the JS heap);
// - the parent: once the process that started the runner is gone, the runner goes too.
// Past a bound it writes one STOP line on stderr and kills its own process.
import { writeSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

/** How often the bounds are checked. */
const EVERY_MS = 20;
/** The line prefix the parent reads (js/sql.js). */
export const STOP_PREFIX = "SMARTER_COMPACT_SQL_STOP ";

if (parentPort) {
  const { ppid, graceMs } = workerData;
  let started = null;
  let base = 0;
  let timeoutMs = 0;
  let memoryBytes = 0;
  const stop = (message) => {
    try {
      writeSync(2, `\n${STOP_PREFIX}${JSON.stringify({ code: "E_SQL", error: message })}\n`);
    } finally {
      process.kill(process.pid, "SIGKILL");
    }
  };
  // `{timeoutMs, memoryBytes}` when the query starts.
  parentPort.on("message", (m) => {
    ({ timeoutMs, memoryBytes } = m);
    started = performance.now();
    base = process.memoryUsage.rss();
  });
  setInterval(() => {
    if (process.ppid !== ppid)
      return stop("the process that ran the query is gone; the query runner stopped with it");
    if (started === null) return;
    if (performance.now() - started > timeoutMs + graceMs)
      return stop(`the query ran longer than ${timeoutMs} ms and was stopped`);
    const grown = process.memoryUsage.rss() - base;
    if (grown > memoryBytes)
      stop(
        `the query needed more than ${Math.round(memoryBytes / 2 ** 20)} MB of memory and was stopped (add LIMIT, or aggregate)`,
      );
  }, EVERY_MS);
}
