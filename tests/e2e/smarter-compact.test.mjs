// smarter-compact inside the real hosts: OpenCode 1.18, Pi 1.x (Node 22) and Pi 0.73 (Node 20),
// headless and offline, the plugin loaded from the packed tarball, a scripted model. Every
// assertion is on what the model received (the recorded request bodies) or on the session store.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { startServer, toolNames, toolResults } from "./lib/scripted-server.mjs";
import { runOpenCode, runPi, setupOpenCodeHome, setupPiHome } from "./lib/hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const TRIM_AT = 6000;
const FIVE = [
  "smart_compact_search",
  "smart_compact_sql",
  "smart_compact_get",
  "compact_context",
  "context_status",
];
const POINTER = "[smarter-compact] This session continues.";
const COMPRESSED = "[smarter-compact] output compressed:";
const MARKER = "MARKER-alpha-7781";

const hosts = [
  {
    name: "OpenCode 1.18",
    backend: "bun:sqlite",
    setup: (server, pkg) =>
      setupOpenCodeHome({ server, pluginPath: path.join(pkg.dir, "js", "hosts", "opencode.js") }),
    run: (home, o) =>
      runOpenCode({
        home,
        timeoutMs: 90_000,
        continue: o.turn > 0,
        prompt: o.prompt,
        env: o.env,
        extraArgs: o.command ? ["--command", o.command] : [],
      }),
  },
  ...[false, true].map((legacy) => ({
    name: legacy ? "Pi 0.73 (Node 20)" : "Pi 1.x (Node 22)",
    backend: legacy ? "sql.js" : "node:sqlite",
    setup: (server) => setupPiHome({ server }),
    run: (home, o, pkg) =>
      runPi({
        home,
        legacy,
        extensionPath: path.join(pkg.dir, "js", "hosts", "pi.js"),
        sessionDir: home.sessionDir,
        continue: o.turn > 0,
        timeoutMs: 60_000,
        prompt: o.prompt,
        env: o.env,
        extraArgs: o.command ? [`/${o.command}`] : [],
      }),
  })),
];

/** Every message of a Chat Completions body as JSON text. */
const msgs = (body) => body.messages.map((m) => JSON.stringify(m));
const textOfBody = (body) => JSON.stringify(body.messages);

function pairingProblems(body) {
  const open = new Set();
  const problems = [];
  for (const m of body.messages) {
    for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool" && !open.delete(m.tool_call_id))
      problems.push(`orphan result ${m.tool_call_id}`);
  }
  for (const id of open) problems.push(`orphan call ${id}`);
  return problems;
}

/** The compressed output's blob id, from any compressed header the model has seen. */
function blobIdIn(body) {
  return /smart_compact_get\(id=\\?"([0-9a-f]{16})\\?"\)/.exec(textOfBody(body))?.[1];
}

function sessionDb(stateDir) {
  const dir = path.join(stateDir, "context", "sessions");
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".db"));
  assert.equal(files.length, 1, `one session db: ${files}`);
  return path.join(dir, files[0]);
}

for (const h of hosts) {
  test(
    `${h.name}: trims, compresses, recalls, forces a trim, survives a broken store`,
    { timeout: 300_000 },
    async () => {
      const pkg = installedPackage();
      const script = [
        // turn 1: the marker first, then a huge output (compressed) and three more: by the end of
        // the turn the marker's exchange is trimmed and the last three exchanges stay
        { tool: "bash", args: { command: `echo ${MARKER}; seq 1 400` } },
        { tool: "bash", args: { command: "seq 100000 101900" } },
        { tool: "bash", args: { command: "seq 300000 300700" } },
        { tool: "bash", args: { command: "seq 400000 400700" } },
        { tool: "bash", args: { command: "seq 600000 600700" } },
        { text: "The logs are checked." },
        // turn 2: recall the trimmed turn through the three tools
        { tool: "smart_compact_search", args: { query: MARKER } },
        // the id from the compressed header the model saw in turn 1 (that exchange is trimmed now)
        (_body, ctx) => ({
          tool: "smart_compact_get",
          args: {
            id: ctx.agentRequests.map((q) => blobIdIn(q.body)).find(Boolean),
            start_line: 901,
            end_line: 905,
          },
        }),
        {
          tool: "smart_compact_sql",
          args: {
            sql: "SELECT count(*) AS n FROM output_lines WHERE tool_name = 'bash' AND text LIKE '1009%'",
          },
        },
        { text: "The marker was found." },
        // turn 3: the manual command, then the status and one more step
        { tool: "context_status", args: {} },
        { tool: "bash", args: { command: "seq 500000 500300" } },
        { text: "Compacted." },
        // turn 4: the store is broken; the session goes on and context_status says why
        { tool: "context_status", args: {} },
        { text: "Still working." },
      ];
      const srv = await startServer({ script });
      const stateDir = scratchDir("sc-e2e-state-");
      const env = { SMARTER_COMPACT_STATE_DIR: stateDir, CONTEXT_TRIM_AT_TOKENS: String(TRIM_AT) };
      const home = h.setup(srv, pkg);
      try {
        const turns = [
          { prompt: "Check the build logs." },
          { prompt: "What was the marker line?" },
          { prompt: "Go on with the task.", command: "smarter-compact:compact" },
        ];
        for (const [turn, t] of turns.entries()) {
          const r = await h.run(home, { ...t, turn, env }, pkg);
          assert.equal(r.code, 0, `turn ${turn}: ${r.stderr.slice(-2000)}`);
        }
        // What the store recorded for each agent request of turns 1–3.
        const db = sessionDb(stateDir);
        const store = new Database(db, { readonly: true });
        const rows = store
          .prepare("SELECT trimmed, after_tokens, over_limit, fail_open FROM requests ORDER BY id")
          .all();
        const manual = store.prepare("SELECT count(*) AS n FROM trims WHERE manual = 1").get().n;
        store.close();
        const bodies = srv.agentRequests().map((q) => q.body);
        assert.equal(rows.length, bodies.length, "the hook ran once per model request");
        assert.ok(bodies.length >= 11, `agent requests: ${bodies.length}`);
        let trims = 0;
        for (const [k, b] of bodies.entries()) {
          for (const name of FIVE)
            assert.ok(toolNames(b).includes(name), `request ${k}: ${name} not advertised`);
          assert.deepEqual(pairingProblems(b), [], `request ${k}`);
          assert.equal(rows[k].fail_open, 0, `request ${k} failed open`);
          if (rows[k].trimmed) {
            trims++;
            assert.ok(textOfBody(b).includes(POINTER), `request ${k}: trimmed without the pointer`);
            assert.ok(
              rows[k].after_tokens <= TRIM_AT || rows[k].over_limit,
              `request ${k}: ${rows[k].after_tokens} tokens after the trim`,
            );
            assert.ok(
              textOfBody(b).length / 4 < 2.5 * TRIM_AT,
              `request ${k}: body of ${textOfBody(b).length} chars`,
            );
          } else if (k > 0) {
            const prev = msgs(bodies[k - 1]);
            const cur = msgs(b);
            const diverge = prev.findIndex((m, i) => m !== cur[i]);
            assert.equal(
              diverge,
              -1,
              `request ${k} does not extend request ${k - 1} byte for byte (first difference at message ${diverge})`,
            );
          }
        }
        assert.ok(trims >= 2, `trims: ${trims}`);
        assert.equal(manual, 1, "the manual command made one trim");
        // A huge output arrives compressed with its header.
        assert.ok(
          bodies.some((b) => textOfBody(b).includes(COMPRESSED)),
          "no compressed output reached the model",
        );
        // The recall tools answered about the trimmed turn.
        const texts = bodies.flatMap((b) => toolResults(b).map((r) => r.text));
        assert.ok(
          texts.some((t) => t.includes(MARKER) && t.includes("smart_compact_get(id=")),
          "search did not find the trimmed marker",
        );
        assert.ok(
          texts.some(
            (t) => t.includes("100900") && t.includes("100904") && t.includes("lines 901–905"),
          ),
          "get did not return lines 901–905 of the compressed output",
        );
        assert.ok(
          texts.some((t) => t.includes("\nn\n100\n(1 row)")),
          `sql did not count the 100 lines starting with 1009: ${texts.filter((t) => t.includes("row")).join(" / ")}`,
        );

        assert.ok(
          texts.some((t) => t.includes(`store: ${h.backend} at `)),
          `the store is not ${h.backend}`,
        );

        // Break the store (the database file becomes a directory): the session goes on.
        for (const ext of ["", "-wal", "-shm"]) fs.rmSync(db + ext, { force: true });
        fs.mkdirSync(db);
        const r4 = await h.run(home, { prompt: "Status please.", turn: 3, env }, pkg);
        assert.equal(r4.code, 0, `broken store: ${r4.stderr.slice(-2000)}`);
        fs.rmSync(db, { recursive: true });
        const status = toolResults(srv.agentRequests().at(-1).body)
          .map((r) => r.text)
          .join("\n");
        assert.match(status, /NOT AVAILABLE/, "context_status does not say the store is broken");
        assert.match(status, /fail-opens: [1-9]/, "context_status does not count the fail-opens");
      } finally {
        await srv.close();
      }
    },
  );
}
