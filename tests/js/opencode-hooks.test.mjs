// The OpenCode plugin's hooks called as OpenCode 1.18 calls them: the messages are rewritten
// before the system prompt is built (so the first request asks the server for the model's limit),
// and a compaction the user forces gets the store's note in `output.context`.
import assert from "node:assert/strict";
import { test } from "node:test";
import plugin from "../../npm/js/hosts/opencode.js";
import { scratchDir } from "./helpers/scratch.mjs";

const MODEL = { providerID: "local", modelID: "local-qwen" };

/** A session of `steps` bash exchanges, its user message naming `model`. */
function history(sessionID, steps, model = MODEL) {
  const h = [
    {
      info: { id: "u1", sessionID, role: "user", model },
      parts: [{ id: "p-u1", type: "text", text: "fix the flaky test" }],
    },
  ];
  for (let k = 0; k < steps; k++) {
    const output = Array.from({ length: 60 }, (_, i) => `step ${k} line ${i}: ok`).join("\n");
    h.push({
      info: { id: `msg_${k}`, sessionID, role: "assistant", modelID: model.modelID },
      parts: [
        {
          id: `t${k}`,
          type: "tool",
          callID: `call_${k}`,
          tool: "bash",
          state: {
            status: "completed",
            input: { command: `run ${k}` },
            output,
            title: `run ${k}`,
            metadata: {},
            time: { start: 1, end: 2 },
          },
        },
      ],
    });
  }
  return h;
}

/** The plugin with a fake SDK client whose /config/providers answers `providers()`. */
async function hooksWith(providers) {
  const calls = { providers: 0 };
  const client = {
    tui: { showToast: async () => {} },
    config: {
      providers: async () => {
        calls.providers++;
        return providers();
      },
    },
  };
  const hooks = await plugin.server(
    { client, directory: scratchDir("sc-hooks-proj-") },
    { stateDir: scratchDir("sc-hooks-") },
  );
  return { hooks, calls };
}

const smallWindow = () => ({
  data: {
    providers: [
      { id: "local", models: { "local-qwen": { limit: { context: 6_000, output: 1_000 } } } },
    ],
  },
});

/** Runs requests of 1..14 steps through the messages hook only; the tool calls' statuses. */
async function drive(hooks, sessionID) {
  for (let n = 1; n <= 14; n++)
    await hooks["experimental.chat.messages.transform"]({}, { messages: history(sessionID, n) });
  const status = await hooks.tool.context_status.execute({}, { sessionID });
  return status;
}

test("the first requests of a process take the model's window from the server, asked once", async () => {
  const { hooks, calls } = await hooksWith(smallWindow);
  const status = await drive(hooks, "ses_first");
  assert.match(
    status,
    /threshold in force: 3000 tokens for local-qwen \(context window 6000 tokens\)/,
  );
  assert.match(status, /trims: [1-9]/);
  assert.equal(calls.providers, 1, "one lookup per model");
});

test("a failing or unknowing server leaves the table's threshold, and the request goes out", async () => {
  for (const providers of [
    () => {
      throw new Error("server gone");
    },
    () => ({ data: { providers: [{ id: "local", models: {} }] } }),
    () => ({ error: { name: "NotFound" } }),
  ]) {
    const { hooks } = await hooksWith(providers);
    const status = await drive(hooks, "ses_unknown");
    assert.match(
      status,
      /threshold in force: 125000 tokens for local-qwen \(context window not known\)/,
    );
    assert.match(status, /trims: 0/);
    assert.match(status, /fail-opens: 0/);
  }
});

test("a forced compaction gets the store's note in output.context; nothing for an empty session", async () => {
  const { hooks } = await hooksWith(smallWindow);
  await drive(hooks, "ses_compact");
  const output = { context: [], prompt: undefined };
  await hooks["experimental.session.compacting"]({ sessionID: "ses_compact" }, output);
  assert.equal(output.context.length, 1);
  assert.match(
    output.context[0],
    /^\[smarter-compact\] All 29 messages of this session are kept in full/,
  );
  assert.match(
    output.context[0],
    /\d+ trims? so far took older turns out of the model's context \(the latest: \d+ messages, ≈[\d.]+k? tokens\)/,
  );
  assert.match(output.context[0], /smart_compact_search\(query\)/);
  assert.equal(output.prompt, undefined, "OpenCode's own prompt is left alone");

  const empty = { context: [] };
  await hooks["experimental.session.compacting"]({ sessionID: "ses_never_seen" }, empty);
  assert.deepEqual(empty.context, []);
  // Odd calls never throw.
  await hooks["experimental.session.compacting"]({}, { context: [] });
  await hooks["experimental.session.compacting"]({ sessionID: "ses_compact" }, {});
});
