// The OpenCode plugin under plain Node 20, as the desktop app runs it: no bun:sqlite, the hooks
// called with messages shaped like the ones OpenCode really passed (recorded in the real host).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import plugin from "../../npm/js/hosts/opencode.js";
import { scratchDir } from "./helpers/scratch.mjs";

const recorded = JSON.parse(
  readFileSync(new URL("../e2e/fixtures/recorded-opencode-messages.json", import.meta.url), "utf8"),
).invocations.at(-1).messages;
const user = recorded.find((m) => m.info.role === "user");
const asst = recorded.find(
  (m) => m.info.role === "assistant" && m.parts.some((p) => p.type === "tool"),
);
const toolPart = asst.parts.find((p) => p.type === "tool");

function history(steps) {
  const h = [{ ...user, parts: [{ ...user.parts[0], text: "fix the flaky test" }] }];
  for (let k = 0; k < steps; k++) {
    const output = Array.from(
      { length: k === 2 ? 500 : 60 },
      (_, i) => `step ${k} line ${i}: ok`,
    ).join("\n");
    h.push({
      info: { ...asst.info, id: `msg_${k}` },
      parts: [
        { type: "step-start", id: `s${k}` },
        {
          ...toolPart,
          id: `t${k}`,
          callID: `call_${k}`,
          state: { ...toolPart.state, input: { command: `run ${k}` }, output },
        },
      ],
    });
  }
  return h;
}

test("the plugin works under Node 20 with a Node SQLite backend", async () => {
  assert.equal(typeof globalThis.Bun, "undefined");
  assert.equal(plugin.id, "smarter-compact");
  const stateDir = scratchDir("sc-oc-node-");
  const hooks = await plugin.server({}, { stateDir, trimAtTokens: 1500 });
  assert.deepEqual(Object.keys(hooks.tool).sort(), [
    "compact_context",
    "context_status",
    "smart_compact_get",
    "smart_compact_search",
    "smart_compact_sql",
  ]);
  const cfg = {};
  await hooks.config(cfg);
  assert.ok(cfg.command["smarter-compact:compact"].template);
  const system = { system: ["You are OpenCode."] };
  await hooks["experimental.chat.system.transform"]({ sessionID: user.info.sessionID }, system);
  assert.match(system.system.at(-1), /smart_compact_search/);
  let trimmed = false;
  let compressed = false;
  for (let n = 1; n <= 16; n++) {
    const messages = history(n);
    const output = { messages };
    await hooks["experimental.chat.messages.transform"]({}, output);
    assert.equal(output.messages, messages, "the same array, edited in place");
    trimmed ||= messages.some((m) => m.parts.some((p) => p.id === "prt_smarter_compact_pointer"));
    compressed ||= messages.some((m) =>
      m.parts.some(
        (p) =>
          p.type === "tool" && p.state.output.startsWith("[smarter-compact] output compressed:"),
      ),
    );
  }
  assert.ok(trimmed, "a trim put the pointer in");
  assert.ok(compressed, "the 500-line output went out compressed");
  const status = await hooks.tool.context_status.execute({}, { sessionID: user.info.sessionID });
  assert.match(status, /store: (better-sqlite3|sql\.js) at /);
  assert.match(status, /trims: [1-9]/);
  const hits = await hooks.tool.smart_compact_search.execute(
    { query: "step 0 line 7" },
    { sessionID: user.info.sessionID },
  );
  assert.match(hits, /message \d+ · output of bash · line 8/);
  await hooks["command.execute.before"](
    { command: "smarter-compact:compact", sessionID: user.info.sessionID, arguments: "" },
    { parts: [] },
  );
  const after = { messages: history(16) };
  await hooks["experimental.chat.messages.transform"]({}, after);
  const s2 = await hooks.tool.context_status.execute({}, { sessionID: user.info.sessionID });
  assert.match(s2, /manual/);
  const bad = await hooks.tool.smart_compact_get.execute(
    { id: "../x" },
    { sessionID: user.info.sessionID },
  );
  assert.match(bad, /E_BAD_ID/);
});
