// The public API on the built wasm package: transform, fail-open, strict errors with codes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { constants, createCompactor, version } from "../../npm/js/index.js";
import { engineModule } from "../../npm/js/wasm.js";
import { scratchDir } from "./helpers/scratch.mjs";

const stateDir = scratchDir("sc-api-");
let sessions = 0;
const open = (config = {}) =>
  createCompactor({ sessionId: `api-test-${++sessions}`, stateDir, config });

const MALFORMED = {
  "missing role": [{ content: "hi" }],
  "tool result for an unknown call": [
    { role: "user", content: "task" },
    { role: "tool", tool_call_id: "ghost", content: "out" },
  ],
  "non-string content": [{ role: "user", content: 42 }],
  "tool_calls of the wrong type": [{ role: "assistant", content: null, tool_calls: { id: "x" } }],
  "arguments of the wrong type": [
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: {} } }],
    },
  ],
  "a message that is not an object": ["hello"],
};
const CODES = {
  "missing role": "E_MALFORMED",
  "tool result for an unknown call": "E_ORPHAN_RESULT",
  "non-string content": "E_MALFORMED",
  "tool_calls of the wrong type": "E_MALFORMED",
  "arguments of the wrong type": "E_MALFORMED",
  "a message that is not an object": "E_MALFORMED",
};

test("version is the crate version", async () => {
  assert.match(await version(), /^\d+\.\d+\.\d+$/);
});

for (const [what, messages] of Object.entries(MALFORMED)) {
  test(`strict: ${what} → Error with code ${CODES[what]}`, async () => {
    const c = await open();
    await assert.rejects(c.transform(messages, { format: "openai", strict: true }), (e) => {
      assert.ok(e instanceof Error, "a real Error, not a string");
      assert.equal(e.name, "SmarterCompactError");
      assert.equal(e.code, CODES[what]);
      assert.ok(e.message.length > 10);
      return true;
    });
  });

  test(`host path: ${what} → unchanged pass-through, fail_open`, async () => {
    const c = await open();
    const input = structuredClone(messages);
    const { messages: out, stats, sources } = await c.transform(input, { format: "openai" });
    assert.equal(out, input, "the very same array");
    assert.deepEqual(
      sources,
      input.map((_, i) => i),
      "each message is its own source",
    );
    assert.deepEqual(out, messages, "unchanged");
    assert.equal(stats.fail_open, true);
    assert.equal(stats.error.code, CODES[what]);
    const status = await c.status();
    assert.equal(status.fail_opens, 1);
    // The session is not broken: the next healthy request works.
    const ok = await c.transform([{ role: "user", content: "still here" }], { format: "openai" });
    assert.equal(ok.stats.fail_open, false);
  });
}

test("bad arguments get codes too", async () => {
  const c = await open();
  await assert.rejects(c.transform("nope", { strict: true }), { code: "E_ARG" });
  await assert.rejects(c.transform([], { format: "gemini", strict: true }), { code: "E_FORMAT" });
  await assert.rejects(c.transform([{ role: "user", content: 1n }], { strict: true }), {
    code: "E_ARG",
  });
  for (const sessionId of ["../etc", "a/b", "", "x\u0000y", ".hidden", "x".repeat(200), 42]) {
    await assert.rejects(
      createCompactor({ sessionId, stateDir }),
      { code: "E_BAD_ID" },
      String(sessionId),
    );
  }
});

test("an error on the JS side fails that request open and keeps the wasm instance", async () => {
  const c = await open();
  await c.transform([{ role: "user", content: "warm up" }]);
  const before = await engineModule();
  const hit = await c.transform([{ role: "user", content: 1n }]);
  assert.equal(hit.stats.fail_open, true);
  assert.equal(hit.stats.error.code, "E_ARG");
  const next = await c.transform([{ role: "user", content: "go on" }]);
  assert.equal(next.stats.fail_open, false);
  assert.equal(await engineModule(), before, "no reload: only a wasm trap discards the instance");
});

test("compression, pointer and thinking strip in the anthropic format", async () => {
  const c = await open({ trimAtTokens: 2000, compressOverTokens: 300 });
  const big = Array.from({ length: 400 }, (_, i) => `line ${i}: status=ok value=${i * 3}`).join(
    "\n",
  );
  const msgs = [{ role: "user", content: "fix the bug", extra: { kept: true } }];
  for (let i = 0; i < 12; i++) {
    msgs.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: `hm ${i}`, signature: `s${i}` },
        { type: "tool_use", id: `t${i}`, name: "bash", input: { command: `step ${i}` } },
      ],
    });
    msgs.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `t${i}`,
          content: i === 11 ? big : `ok ${i} `.repeat(40),
        },
      ],
    });
  }
  const { messages: out, stats } = await c.transform(msgs, {
    format: "anthropic",
    model: "claude-x",
  });
  assert.equal(stats.trimmed, true);
  assert.equal(stats.compressed, 1);
  assert.ok(stats.after_tokens < stats.before_tokens);
  assert.equal(out[0].extra.kept, true);
  assert.match(
    out[0].content[0].text,
    /^\[smarter-compact\] This session continues\. \d+ earlier messages/,
  );
  assert.equal(out[0].content[1].text, "fix the bug");
  const last = out.at(-1).content[0];
  assert.match(
    last.content,
    /^\[smarter-compact\] output compressed: 400 lines, ≈\d+ tokens; left out: \d+ lines, \d+ bytes, ≈\d+ tokens\. Full text: smart_compact_get\(id="[0-9a-f]{16}"\)/,
  );
  const thinking = out.filter(
    (m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking"),
  );
  assert.equal(thinking.length, 1, "only the latest assistant message keeps its signed thinking");
  assert.equal(thinking[0], out.at(-2), "and it is that same object, untouched");
});

test("compactNow forces a trim on the next request", async () => {
  const c = await open();
  const msgs = [{ role: "user", content: "task" }];
  for (let i = 0; i < 10; i++) {
    msgs.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${i}`, type: "function", function: { name: "bash", arguments: "{}" } }],
    });
    msgs.push({ role: "tool", tool_call_id: `c${i}`, content: `output ${i} `.repeat(100) });
  }
  assert.equal((await c.transform(msgs)).stats.trimmed, false);
  await c.compactNow();
  const { messages, stats } = await c.transform(msgs);
  assert.equal(stats.trimmed, true);
  assert.ok(messages.length < msgs.length);
  const status = await c.status();
  assert.equal(status.trims, 1);
  assert.equal(status.last_trim.manual, true);
});

test("invalid configuration: defaults and a warning, never a crash", async () => {
  const c = await open({ trimAtTokens: "lots", trimToFraction: 7 });
  const { stats } = await c.transform([{ role: "user", content: "hi" }]);
  assert.equal(stats.fail_open, false);
  assert.equal(stats.trim_at, 125000);
  assert.equal(stats.warnings.length, 2);
  const status = await c.status();
  assert.equal(status.trim_to_fraction, 0.3);
});

test("constants(): the engine's formats and error codes, which strict errors use", async () => {
  const k = await constants();
  assert.equal(k.version, await version());
  assert.deepEqual(k.formats, ["openai", "anthropic", "responses", "opencode", "pi"]);
  const c = await open();
  const err = await c.transform(MALFORMED["missing role"], { strict: true }).catch((e) => e);
  assert.ok(k.errorCodes.includes(err.code), err.code);
  assert.equal(k.vectorDim, 384);
});

test("transform's nowMs is the clock of cache-cold cuts: a gap over the cache's lifetime cuts early", async () => {
  // a session above trim_to (0.3 × 16000) and well under trim_at: only a cold cache cuts it
  const history = [
    { role: "system", content: "You are a helpful agent." },
    { role: "user", content: "Read the pages." },
  ];
  for (let i = 0; i < 12; i++) {
    const id = `call_${i}`;
    history.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "read", arguments: `{"p":${i}}` } }],
      },
      { role: "tool", tool_call_id: id, content: `page ${i}: ${"word ".repeat(900)}` },
    );
  }
  const next = (h, k) => [...h, { role: "user", content: `question ${k}?` }];
  const t0 = Date.UTC(2026, 0, 5, 9);
  for (const [gapMs, cold] of [
    [60_000, false],
    [6 * 60_000, true],
  ]) {
    const c = await open({ trimAtTokens: 16000 });
    const first = await c.transform(history, { model: "m", nowMs: t0 });
    assert.equal(first.stats.trimmed, false, "under trim_at: no cut");
    assert.ok(
      first.stats.after_tokens > 0.3 * 16000 + 1600,
      `above trim_to: ${first.stats.after_tokens}`,
    );
    const { stats } = await c.transform(next(history, 1), { model: "m", nowMs: t0 + gapMs });
    assert.equal(stats.trimmed, cold, `after ${gapMs / 60_000} min`);
    assert.equal(stats.cache_cold, cold);
    await c.close();
  }
});
