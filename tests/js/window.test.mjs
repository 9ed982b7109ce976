// The threshold follows the model's context window: what the host tells (OpenCode's
// Model.limit, a caller's contextWindow/reserveTokens), else the engine's table of known models.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import plugin from "../../npm/js/hosts/opencode.js";
import { scratchDir } from "./helpers/scratch.mjs";

const stateDir = scratchDir("sc-window-");
const request = [{ role: "user", content: "hello" }];

test("the threshold in force comes from the window the caller tells, else the known table", async () => {
  const c = await createCompactor({ sessionId: "window-api", stateDir });
  const cases = [
    [{ model: "claude-sonnet-4-5" }, 200_000, 120_000],
    [{ model: "claude-haiku-4-5" }, 200_000, 95_000],
    [{ model: "gpt-5-codex" }, 400_000, 125_000],
    [{ model: "mystery-model" }, 0, 125_000],
    [{ model: "local", contextWindow: 32_768, reserveTokens: 16_384 }, 32_768, 9_830],
    [
      { model: "claude-sonnet-4-5", contextWindow: 1_000_000, reserveTokens: 32_000 },
      1_000_000,
      125_000,
    ],
  ];
  for (const [opts, window, trimAt] of cases) {
    const { stats } = await c.transform(request, { format: "openai", ...opts, strict: true });
    assert.equal(stats.context_window, window, JSON.stringify(opts));
    assert.equal(stats.trim_at, trimAt, JSON.stringify(opts));
  }
  await assert.rejects(
    c.transform(request, { model: "m", contextWindow: -5, strict: true }),
    (e) => e.code === "E_ARG",
  );
  await c.close();
});

test("a percentage threshold is a share of the window; the user's tokens stand", async () => {
  const dir = scratchDir("sc-window-toml-");
  mkdirSync(join(dir, "context"), { recursive: true });
  writeFileSync(
    join(dir, "context", "config.toml"),
    '[context_proxy.trim_at]\n"qwen*" = "50%"\nllama = 20000\n',
  );
  const c = await createCompactor({ sessionId: "window-share", stateDir: dir });
  const at = async (model, contextWindow) =>
    (await c.transform(request, { model, contextWindow, strict: true })).stats.trim_at;
  assert.equal(await at("qwen3-coder", 32_768), 16_384, "50% of the window");
  assert.equal(await at("qwen3-coder", 0), 125_000, "no window: the default entry");
  assert.equal(await at("llama-3", 8_192), 20_000, "tokens the user set are taken as set");
  await c.close();
});

// OpenCode hands the plugin the model (with limit.context and limit.output) in
// experimental.chat.system.transform; the plugin keeps it per session.
function opencodeHistory(steps) {
  const h = [
    {
      info: { id: "u1", sessionID: "ses_window", role: "user", model: { modelID: "local-qwen" } },
      parts: [{ id: "p-u1", type: "text", text: "fix the flaky test" }],
    },
  ];
  for (let k = 0; k < steps; k++) {
    h.push({
      info: { id: `msg_${k}`, sessionID: "ses_window", role: "assistant", modelID: "local-qwen" },
      parts: [
        {
          id: `t${k}`,
          type: "tool",
          callID: `call_${k}`,
          tool: "bash",
          state: {
            status: "completed",
            input: { command: `run ${k}` },
            output: Array.from({ length: 60 }, (_, i) => `step ${k} line ${i}: ok`).join("\n"),
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

async function opencodeTrims(limit, options = {}) {
  // OpenCode's SDK client as the plugin sees it: the toasts it is asked to show.
  const toasts = [];
  const client = { tui: { showToast: async ({ body }) => toasts.push(body) } };
  const stateDir = scratchDir("sc-window-oc-");
  const hooks = await plugin.server(
    { client, directory: scratchDir("sc-window-proj-") },
    { stateDir, ...options },
  );
  const sessionID = "ses_window";
  const system = { system: ["You are OpenCode."] };
  await hooks["experimental.chat.system.transform"](
    { sessionID, model: limit ? { id: "local-qwen", limit } : undefined },
    system,
  );
  for (let n = 1; n <= 14; n++) {
    const messages = opencodeHistory(n);
    await hooks["experimental.chat.messages.transform"]({}, { messages });
  }
  // The cuts the session's store recorded.
  const store = await createCompactor({ sessionId: "ses_window", stateDir, readonly: true });
  const trims = (await store.status()).trims ?? 0;
  await store.close();
  return { trims, toasts };
}

test("OpenCode: a small model window sets the threshold; without one the table's 125k does", async () => {
  const small = await opencodeTrims({ context: 6_000, output: 1_000 });
  assert.ok(small.trims > 0, "trimmed under a 6k window");
  assert.equal((await opencodeTrims(null)).trims, 0, "no window: 125k, never reached");
  const bad = await opencodeTrims({ context: "lots", output: -1 });
  assert.equal(bad.trims, 0, "a bad limit is ignored");
  assert.deepEqual(bad.toasts, []);
});

test("OpenCode: one toast per new cut, saying what left and how to get it back; notify = false stops them", async () => {
  const { trims, toasts } = await opencodeTrims({ context: 6_000, output: 1_000 });
  assert.equal(toasts.length, trims, `${toasts.length} toasts for ${trims} cuts`);
  for (const t of toasts) {
    assert.equal(t.variant, "info");
    assert.match(
      t.message,
      /^smarter-compact: \d+ older messages trimmed, request ≈[\d.]+k → [\d.]+k tokens/,
    );
    assert.match(t.message, /smart_compact_search/);
  }
  const quiet = await opencodeTrims({ context: 6_000, output: 1_000 }, { notify: false });
  assert.equal(quiet.trims, trims, "the same cuts");
  assert.deepEqual(quiet.toasts, []);
});
