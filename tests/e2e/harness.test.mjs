// End-to-end harness self-test: the real OpenCode, Pi 1.x and Pi 0.73 binaries, headless and offline,
// with the probe plugin/extension, against the scripted server. Run under Node 20:
//   cd tests/e2e && npm ci && node --test
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  startServer,
  toolNames,
  lastUserText,
  toolResults,
  contentText,
} from "./lib/scripted-server.mjs";
import {
  runOpenCode,
  runPi,
  setupOpenCodeHome,
  setupPiHome,
  readJsonLines,
  cleanup,
} from "./lib/hosts.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const PROBE_OPENCODE = path.join(here, "fixtures", "probe-opencode.js");
const PROBE_PI = path.join(here, "fixtures", "probe-pi.js");
const HOST_TIMEOUT = 50_000;
const TEST_TIMEOUT = 60_000;

const hosts = [
  {
    name: "OpenCode",
    hook: "experimental.chat.messages.transform",
    setup: (server) => setupOpenCodeHome({ server, pluginPath: PROBE_OPENCODE }),
    run: (home, o) => runOpenCode({ home, timeoutMs: HOST_TIMEOUT, ...o }),
    // The user text of the last user message the hook received.
    hookUserText: (msgs) => {
      const u = msgs.filter((m) => m.info?.role === "user").at(-1);
      return (u?.parts ?? [])
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("");
    },
  },
  ...[false, true].map((legacy) => ({
    name: legacy ? "Pi 0.73 (legacy, Node 20)" : "Pi 1.x (Node 22)",
    hook: "context",
    setup: (server) => setupPiHome({ server }),
    run: (home, o) =>
      runPi({
        home,
        extensionPath: PROBE_PI,
        legacy,
        sessionDir: home.sessionDir,
        timeoutMs: HOST_TIMEOUT,
        ...o,
      }),
    hookUserText: (msgs) => {
      const u = msgs.filter((m) => m.role === "user").at(-1);
      return typeof u?.content === "string"
        ? u.content
        : (u?.content ?? [])
            .filter((b) => b.type === "text")
            .map((b) => b.text)
            .join("");
    },
  })),
];

function explain(r) {
  return (
    `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}${r.timedOut ? " TIMED OUT" : ""} after ${r.ms} ms\n` +
    `$ ${r.args.join(" ")}\n--- stderr (tail) ---\n${r.stderr.slice(-3000)}\n--- stdout (tail) ---\n${r.stdout.slice(-2000)}`
  );
}

function assertRanOk(r) {
  assert.equal(r.timedOut, false, explain(r));
  assert.equal(r.code, 0, explain(r));
}

for (const h of hosts) {
  test(
    `${h.name}: probe tool advertised, user text rewritten, bash result in the next request`,
    { timeout: TEST_TIMEOUT },
    async () => {
      const srv = await startServer({
        script: [{ tool: "bash", args: { command: "echo hi" } }, { text: "All done." }],
      });
      const home = h.setup(srv);
      const probeLog = path.join(home.root, "probe.jsonl");
      try {
        const r = await h.run(home, { prompt: "please run echo hi", env: { PROBE_LOG: probeLog } });
        assertRanOk(r);
        const agent = r.requests.filter((q) => q.agent);
        assert.equal(
          agent.length,
          2,
          `expected 2 agent requests, got ${agent.length}\n${explain(r)}`,
        );
        assert.equal(srv.remaining(), 0);

        const [first, second] = agent.map((q) => q.body);
        assert.ok(toolNames(first).includes("probe"), `probe not in tools: ${toolNames(first)}`);
        assert.ok(toolNames(first).includes("bash"), `bash not in tools: ${toolNames(first)}`);
        assert.equal(first.stream, true, "hosts are expected to stream");
        for (const body of [first, second])
          assert.equal(lastUserText(body), "[PROBED] please run echo hi");

        const callId = agent[0].response.tool_calls[0].id;
        const results = toolResults(second);
        assert.equal(results.length, 1, `tool results in request 2: ${JSON.stringify(results)}`);
        assert.equal(results[0].id, callId);
        assert.equal(results[0].text.trim(), "hi");
        const asst = second.messages.find((m) => m.role === "assistant" && m.tool_calls?.length);
        assert.equal(asst?.tool_calls?.[0]?.function?.name, "bash");
        assert.deepEqual(JSON.parse(asst.tool_calls[0].function.arguments), { command: "echo hi" });

        // What the hook saw: one invocation per LLM step, each with the original (unprefixed) text:
        // the rewrite is per request and is not persisted by the host.
        const calls = readJsonLines(probeLog).filter((e) => e.hook === h.hook);
        assert.equal(calls.length, 2, `hook invocations: ${calls.length}`);
        for (const c of calls) assert.equal(h.hookUserText(c.messages), "please run echo hi");
      } finally {
        await srv.close();
        cleanup(home);
      }
    },
  );

  test(
    `${h.name}: second turn with --continue carries the first turn`,
    { timeout: TEST_TIMEOUT },
    async () => {
      const srv = await startServer({
        script: [
          { tool: "bash", args: { command: "echo hi" } },
          { text: "Turn one done." },
          (body) => ({
            tool: "probe",
            args: {
              note: `saw ${body.messages.filter((m) => m.role === "tool").length} result(s)`,
            },
          }),
          { text: "Turn two done." },
        ],
      });
      const home = h.setup(srv);
      const probeLog = path.join(home.root, "probe.jsonl");
      try {
        assertRanOk(await h.run(home, { prompt: "turn one", env: { PROBE_LOG: probeLog } }));
        const r2 = await h.run(home, {
          prompt: "turn two",
          env: { PROBE_LOG: probeLog },
          continue: true,
        });
        assertRanOk(r2);
        const agent = r2.requests.filter((q) => q.agent).map((q) => q.body);
        assert.equal(agent.length, 2, explain(r2));
        const users = agent[0].messages
          .filter((m) => m.role === "user")
          .map((m) => contentText(m.content));
        assert.deepEqual(users, ["turn one", "[PROBED] turn two"]);
        assert.deepEqual(
          toolResults(agent[0]).map((t) => t.text.trim()),
          ["hi"],
        );
        assert.deepEqual(
          toolResults(agent[1]).map((t) => t.text.trim()),
          ["hi", "probe-ok:saw 1 result(s)"],
        );
        assert.equal(readJsonLines(probeLog).filter((e) => e.hook === h.hook).length, 4);
      } finally {
        await srv.close();
        cleanup(home);
      }
    },
  );
}
