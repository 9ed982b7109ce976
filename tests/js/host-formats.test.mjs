// The Pi and OpenCode formats on the built package: long sessions built from messages recorded
// in the real hosts, replayed request by request as each host would call its hook.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { scratchDir } from "./helpers/scratch.mjs";

const fixture = (name) =>
  JSON.parse(
    readFileSync(
      new URL(`../e2e/fixtures/recorded-${name}-messages.json`, import.meta.url),
      "utf8",
    ),
  );
const stateDir = scratchDir("sc-hosts-");
const ser = (x) => JSON.stringify(x);
const bigOutput = (k) =>
  Array.from({ length: 400 }, (_, i) => `${k}:${i} build step ok value=${i * 7}`).join("\n");

/** A long Pi session in the shapes Pi really passes: turns of tool exchanges, signed thinking. */
function piSession() {
  const rec = fixture("pi").invocations.at(-1).messages;
  const [user, asst, result] = rec;
  const h = [];
  for (let t = 0; t < 3; t++) {
    h.push({ ...user, content: [{ type: "text", text: `task turn ${t}: fix the parser` }] });
    for (let k = 0; k < 8; k++) {
      const id = `call_${t}_${k}`;
      h.push({
        ...asst,
        content: [
          { type: "thinking", thinking: `think ${t}.${k}`, thinkingSignature: `sig${t}${k}` },
          { type: "text", text: `step ${t}.${k}` },
          { type: "toolCall", id, name: "bash", arguments: { command: `make step${k}` } },
        ],
      });
      h.push({
        ...result,
        toolCallId: id,
        content: [
          { type: "text", text: k === 3 ? bigOutput(`${t}.${k}`) : `output ${t}.${k} `.repeat(60) },
        ],
      });
    }
    h.push({ ...asst, content: [{ type: "text", text: `turn ${t} done` }], stopReason: "stop" });
  }
  return h;
}

/** A long OpenCode session: each step an assistant message whose tool parts hold call and result. */
function opencodeSession() {
  const rec = fixture("opencode").invocations.at(-1).messages;
  const user = rec.find((m) => m.info.role === "user");
  const asst = rec.find(
    (m) => m.info.role === "assistant" && m.parts.some((p) => p.type === "tool"),
  );
  const tool = asst.parts.find((p) => p.type === "tool");
  const h = [];
  for (let t = 0; t < 3; t++) {
    h.push({
      info: { ...user.info, id: `msg_u${t}` },
      parts: [{ ...user.parts[0], text: `task turn ${t}: fix the parser` }],
    });
    for (let k = 0; k < 8; k++) {
      const out = k === 3 ? bigOutput(`${t}.${k}`) : `output ${t}.${k} `.repeat(60);
      h.push({
        info: { ...asst.info, id: `msg_a${t}_${k}` },
        parts: [
          { type: "step-start", id: `prt_s${t}${k}` },
          {
            type: "reasoning",
            text: `think ${t}.${k}`,
            metadata: { anthropic: { signature: `sig${t}${k}` } },
            id: `prt_r${t}${k}`,
          },
          {
            ...tool,
            id: `prt_t${t}${k}`,
            callID: `call_${t}_${k}`,
            state: {
              ...tool.state,
              status: "completed",
              input: { command: `make step${k}` },
              output: out,
            },
          },
        ],
      });
    }
    h.push({
      info: { ...asst.info, id: `msg_d${t}` },
      parts: [{ type: "text", text: `turn ${t} done`, id: `prt_d${t}` }],
    });
  }
  return h;
}

const requestsOf = (history, isAssistant) => {
  const reqs = [];
  history.forEach((m, i) => i > 0 && isAssistant(m) && reqs.push(history.slice(0, i)));
  reqs.push(history);
  return reqs;
};

async function replay(format, history, isAssistant) {
  const c = await createCompactor({
    sessionId: `fmt-${format}`,
    stateDir,
    config: { trimAtTokens: 3000, compressOverTokens: 1000 },
  });
  const steps = [];
  for (const req of requestsOf(history, isAssistant)) {
    const snapshot = ser(req);
    const { messages, stats } = await c.transform(req, { format, model: "m" });
    assert.equal(ser(req), snapshot, "the host's own objects are never modified");
    assert.equal(stats.fail_open, false, stats.error?.message);
    steps.push({ req, messages, stats });
  }
  return steps;
}

function checkSticky(steps) {
  let prev = null;
  let trims = 0;
  for (const { messages, stats } of steps) {
    if (stats.trimmed) trims++;
    else if (prev)
      assert.ok(
        prev.every((m, i) => ser(m) === ser(messages[i])),
        "prefix changed without a trim",
      );
    prev = messages;
  }
  assert.ok(trims >= 2, `trims: ${trims}`);
}

test("pi: trims, compresses, keeps pairs and thinking rules, sticky between trims", async () => {
  const steps = await replay("pi", piSession(), (m) => m.role === "assistant");
  checkSticky(steps);
  const last = steps.at(-1).messages;
  const calls = new Set(
    last.flatMap((m) =>
      m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.id) : [],
    ),
  );
  for (const m of last)
    if (m.role === "toolResult")
      assert.ok(calls.has(m.toolCallId), `orphan result ${m.toolCallId}`);
  const results = new Set(last.filter((m) => m.role === "toolResult").map((m) => m.toolCallId));
  for (const id of calls) assert.ok(results.has(id), `orphan call ${id}`);
  const pointer = last.find(
    (m) =>
      m.role === "user" &&
      m.content[0].text.startsWith("[smarter-compact] This session continues."),
  );
  assert.ok(pointer, "the pointer is on the last user turn");
  assert.equal(pointer.content[1].text, "task turn 2: fix the parser");
  const compressed = steps
    .flatMap((s) => s.messages)
    .find(
      (m) =>
        m.role === "toolResult" &&
        m.content[0].text.startsWith("[smarter-compact] output compressed: 400 lines"),
    );
  assert.ok(compressed, "the 400-line output went out compressed");
  const trimmedStep = steps.filter((s) => s.stats.trimmed).at(-1);
  const signedKept = trimmedStep.messages.filter(
    (m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking"),
  );
  assert.equal(
    signedKept.length,
    1,
    "signed thinking only on the latest assistant message after a trim",
  );
});

test("opencode: one message per step, tool parts compressed in place, pointer part, sticky", async () => {
  const history = opencodeSession();
  const steps = await replay("opencode", history, (m) => m.info.role === "assistant");
  checkSticky(steps);
  const last = steps.at(-1).messages;
  assert.ok(last.length < history.length);
  const head = last.find(
    (m) => m.info.role === "user" && m.parts[0].id === "prt_smarter_compact_pointer",
  );
  assert.ok(head, "pointer part on the last user turn");
  assert.equal(head.parts[0].synthetic, true);
  assert.match(
    head.parts[0].text,
    /^\[smarter-compact\] This session continues\. \d+ earlier messages/,
  );
  const compressed = steps
    .flatMap((s) => s.messages)
    .flatMap((m) => m.parts)
    .find(
      (p) =>
        p.type === "tool" &&
        p.state.output.startsWith("[smarter-compact] output compressed: 400 lines"),
    );
  assert.ok(compressed, "the 400-line tool part went out compressed");
  assert.equal(compressed.state.status, "completed");
  const trimmedStep = steps.filter((s) => s.stats.trimmed).at(-1);
  const withReasoning = trimmedStep.messages.filter((m) =>
    m.parts.some((p) => p.type === "reasoning"),
  );
  assert.equal(
    withReasoning.length,
    1,
    "signed reasoning only on the latest assistant message after a trim",
  );
});

test("a synthetic message is never the last real user turn", async () => {
  const h = piSession().slice(0, 20);
  h.push({
    role: "custom",
    customType: "reminder",
    content: "remember the style guide",
    display: false,
  });
  const c = await createCompactor({
    sessionId: "fmt-synthetic",
    stateDir,
    config: { trimAtTokens: 1000 },
  });
  await c.compactNow();
  const { messages, stats } = await c.transform(h, { format: "pi" });
  assert.equal(stats.trimmed, true);
  const withPointer = messages.find((m) =>
    (Array.isArray(m.content) ? m.content[0]?.text : m.content)?.startsWith?.("[smarter-compact]"),
  );
  assert.equal(
    withPointer.role,
    "user",
    "the pointer went on the real user turn, not the custom message",
  );
  assert.equal(messages.at(-1).role, "custom");
});

/** A long Codex-style Responses session: developer + environment messages, reasoning with
 * encrypted content, function calls and their outputs. */
function responsesSession() {
  const h = [
    {
      type: "message",
      role: "developer",
      content: [{ type: "input_text", text: "You are Codex." }],
    },
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "<environment_context>cwd=/repo</environment_context>" },
      ],
    },
    { type: "message", role: "user", content: [{ type: "input_text", text: "fix the parser" }] },
  ];
  for (let k = 0; k < 30; k++) {
    h.push({
      type: "reasoning",
      id: `rs_${k}`,
      summary: [],
      content: null,
      encrypted_content: `enc-${k}-${"z".repeat(40)}`,
    });
    h.push({
      type: "function_call",
      id: `fc_${k}`,
      call_id: `call_${k}`,
      name: "exec_command",
      arguments: JSON.stringify({ cmd: `make step${k}` }),
    });
    h.push({
      type: "function_call_output",
      call_id: `call_${k}`,
      output: k === 4 ? bigOutput(`r${k}`) : `output ${k} `.repeat(60),
    });
  }
  return h;
}

test("responses: reasoning travels with its call, outputs stay paired, sticky between trims", async () => {
  const history = responsesSession();
  const steps = await replay("responses", history, (m) => m.type === "reasoning");
  checkSticky(steps);
  for (const { messages } of steps) {
    const calls = new Set(messages.filter((m) => m.type === "function_call").map((m) => m.call_id));
    const outs = messages.filter((m) => m.type === "function_call_output");
    for (const o of outs) assert.ok(calls.has(o.call_id), `orphan output ${o.call_id}`);
    assert.equal(outs.length, calls.size, "no call without its output");
    messages.forEach((m, i) => {
      if (m.type === "reasoning")
        assert.equal(
          messages[i + 1]?.type,
          "function_call",
          "a reasoning item is followed by its call",
        );
    });
    assert.equal(messages[0].role, "developer");
  }
  const last = steps.at(-1).messages;
  const prompt = last.find(
    (m) =>
      m.role === "user" &&
      m.content[0].text.startsWith("[smarter-compact] This session continues."),
  );
  assert.ok(prompt, "the pointer is on the real user turn (not the environment message)");
  assert.equal(prompt.content[1].text, "fix the parser");
  const kept = last.filter((m) => m.type === "reasoning");
  assert.ok(
    kept.every((r) => r.encrypted_content.startsWith("enc-")),
    "encrypted content verbatim",
  );
  assert.ok(
    steps
      .flatMap((s) => s.messages)
      .some(
        (m) =>
          m.type === "function_call_output" &&
          m.output.startsWith("[smarter-compact] output compressed: 400 lines"),
      ),
  );
});
