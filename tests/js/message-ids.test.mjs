// Requests by message id: the history a host passes again unchanged is not serialised again, and
// a message the host changed in place (an old turn edited, a tool result's state filled in) is
// seen. Each rewritten request is compared with what a compactor given fresh copies returns.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { MessageIds } from "../../npm/js/message-ids.js";
import { scratchDir } from "./helpers/scratch.mjs";

const stateDir = scratchDir("sc-ids-");
let sessions = 0;
const open = () => createCompactor({ sessionId: `ids-${++sessions}`, stateDir, embedder: false });
const OPTS = { model: "test-model", nowMs: 1_000 };
/** The JSON text of the messages a request sends, as the engine gets it. */
const texts = (req) => JSON.stringify(req.send);

/** An OpenAI-format session of `turns` tool exchanges after a task. */
function openaiSession(turns) {
  const m = [{ role: "user", content: "task: fix the failing test" }];
  for (let i = 0; i < turns; i++) {
    m.push({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: `c${i}`, type: "function", function: { name: "bash", arguments: `{"n":${i}}` } },
      ],
    });
    m.push({ role: "tool", tool_call_id: `c${i}`, content: `output ${i}\n`.repeat(5) });
  }
  return m;
}

/** An Anthropic-format session of `turns` tool exchanges after a task. */
function anthropicSession(turns) {
  const m = [{ role: "user", content: [{ type: "text", text: "task: read the files" }] }];
  for (let i = 0; i < turns; i++) {
    m.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `t${i}`, name: "read", input: { path: `f${i}.py` } }],
    });
    m.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `contents of f${i}` }],
    });
  }
  return m;
}

/** The compactor's request next to a reference compactor's answer for fresh copies. */
async function both(c, ref, req, format) {
  const got = await c.transform(req, { ...OPTS, format, strict: true });
  const want = await ref.transform(structuredClone(req), { ...OPTS, format, strict: true });
  assert.deepEqual(got.messages, want.messages);
  assert.deepEqual(got.stats, want.stats);
  return got;
}

test("an unchanged history is not serialised again: only the new messages are", async () => {
  const [c, ref] = [await open(), await open()];
  const s = openaiSession(20);
  await both(c, ref, s.slice(0, 21), "openai");
  assert.equal(c.serialisedMessages, 21);
  for (let k = 23; k <= s.length; k += 2) {
    const before = c.serialisedMessages;
    await both(c, ref, s.slice(0, k), "openai");
    assert.equal(c.serialisedMessages - before, 2, `request of ${k} messages`);
  }
  await c.close();
  await ref.close();
});

test("an old message edited in place is serialised again and its new text is sent", async () => {
  const [c, ref] = [await open(), await open()];
  const s = openaiSession(10);
  await both(c, ref, s, "openai");
  s[2].content = "output 0, edited by the host";
  const before = c.serialisedMessages;
  const r = await both(c, ref, s, "openai");
  assert.ok(c.serialisedMessages > before);
  assert.equal(r.messages[2].content, "output 0, edited by the host");
  // A key added to an old message is a change too.
  s[1].name = "helper";
  const r2 = await both(c, ref, s, "openai");
  assert.equal(r2.messages[1].name, "helper");
  await c.close();
  await ref.close();
});

test("a tool result whose state changes in place is seen (anthropic)", async () => {
  const [c, ref] = [await open(), await open()];
  const s = anthropicSession(6);
  await both(c, ref, s, "anthropic");
  const block = s[4].content[0];
  block.content = "contents of f1, read again";
  block.is_error = true;
  const r = await both(c, ref, s, "anthropic");
  assert.equal(r.messages[4].content[0].content, "contents of f1, read again");
  assert.equal(r.messages[4].content[0].is_error, true);
  await c.close();
  await ref.close();
});

test("a fresh copy of the history is serialised again; objects with toJSON always are", () => {
  const ids = new MessageIds();
  const s = openaiSession(3);
  const first = ids.request(s);
  ids.accepted(first);
  const again = ids.request(s);
  assert.deepEqual([...again.fresh], [0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual([...again.ids], [...first.ids]);
  ids.accepted(again);
  const copy = ids.request(structuredClone(s));
  assert.deepEqual([...copy.fresh], [1, 1, 1, 1, 1, 1, 1]);
  const odd = { role: "user", content: "x", toJSON: () => ({ role: "user", content: "y" }) };
  const withOdd = [...s, odd];
  ids.accepted(ids.request(withOdd));
  const next = ids.request(withOdd);
  assert.equal(next.fresh[7], 1);
  assert.equal(JSON.parse(texts(next))[0].content, "y");
  // Ids the engine never accepted are not taken as known.
  const unaccepted = new MessageIds();
  unaccepted.request(s);
  assert.deepEqual([...unaccepted.request(s).fresh], [1, 1, 1, 1, 1, 1, 1]);
});

/** An OpenCode session: a task, then `turns` assistant messages with one completed tool part. */
function opencodeSession(turns) {
  const info = (id, role) => ({ id, sessionID: "ses_ids", role, time: { created: 1 } });
  const m = [{ info: info("msg_0", "user"), parts: [{ id: "prt_0", type: "text", text: "task" }] }];
  for (let i = 1; i <= turns; i++)
    m.push({
      info: info(`msg_${i}`, "assistant"),
      parts: [
        {
          id: `prt_${i}`,
          type: "tool",
          callID: `call_${i}`,
          tool: "bash",
          state: { status: "completed", input: { n: i }, output: `line ${i}\n`.repeat(4) },
        },
      ],
    });
  return m;
}

test("OpenCode's new objects for unchanged messages are known by message id", async () => {
  const [c, ref] = [await open(), await open()];
  const s = opencodeSession(30);
  // OpenCode reads its messages back from its database for every request: new objects.
  await both(c, ref, structuredClone(s.slice(0, 20)), "opencode");
  for (let k = 21; k <= s.length; k++) {
    const before = c.serialisedMessages;
    await both(c, ref, structuredClone(s.slice(0, k)), "opencode");
    assert.equal(c.serialisedMessages - before, 1, `request of ${k} messages`);
  }
  // The same id with other content is another message.
  const changed = structuredClone(s);
  changed[3].parts[0].state.output = "pruned by the host";
  const before = c.serialisedMessages;
  const r = await both(c, ref, changed, "opencode");
  assert.ok(c.serialisedMessages > before);
  assert.equal(r.messages[3].parts[0].state.output, "pruned by the host");
  await c.close();
  await ref.close();
});

test("an older message changed in place after the check is sent again by the next request", async () => {
  const [c, ref] = [await open(), await open()];
  const s = openaiSession(80); // 161 messages: the first ones are older than the checked newest
  await both(c, ref, s, "openai");
  // The host awaits the model: the event loop turns and the check after the request runs.
  await new Promise((resolve) => setImmediate(resolve));
  s[2].content = "output 0, edited by the host";
  // Taken on trust: the request still sends the host's own object, as it is now.
  const r = await c.transform(s, { ...OPTS, format: "openai", strict: true });
  assert.equal(r.messages[2].content, "output 0, edited by the host");
  await new Promise((resolve) => setImmediate(resolve));
  // The check after that request found the change: the next request sends the message again.
  const before = c.serialisedMessages;
  await both(c, ref, s, "openai");
  assert.ok(c.serialisedMessages - before >= 1);
  await c.close();
  await ref.close();
});

test("the check of messages taken on trust finds a change and drops their ids", () => {
  const ids = new MessageIds();
  const s = openaiSession(40); // 81 messages
  ids.accepted(ids.request(s));
  const second = ids.request(s);
  assert.equal(texts(second), "[]");
  ids.accepted(second);
  s[1].tool_calls[0].function.arguments = '{"n":99}';
  assert.equal(ids.check(), 1);
  assert.equal(ids.changedLate, 1);
  const third = ids.request(s);
  assert.equal(third.fresh[1], 1);
  assert.notEqual(third.ids[1], second.ids[1]);
  assert.equal(JSON.parse(texts(third))[0].tool_calls[0].function.arguments, '{"n":99}');
});

test("a run of the latest request's messages is taken whole, but for its edited places", () => {
  const ids = new MessageIds();
  const s = openaiSession(100); // 201 messages: a run of 137 ahead of the newest 64
  const first = ids.request(s);
  // The engine sent message 5 back edited (a pointer in its place, say).
  ids.accepted(first, [[0, 5], { from: [5], items: [] }, [6, s.length]]);
  s[5].content = "changed in place after it came back edited";
  const second = ids.request(s);
  assert.equal(second.run, 137);
  assert.deepEqual(
    [...second.fresh.keys()].filter((i) => second.fresh[i]),
    [5],
  );
  assert.equal(JSON.parse(texts(second))[0].content, s[5].content);
  assert.notEqual(second.ids[5], first.ids[5]);
  for (const i of [0, 4, 6, 136, 200]) assert.equal(second.ids[i], first.ids[i]);
});

test("one object at two places of a request gets two ids, inside the run and after it", () => {
  for (const keyed of [false, true]) {
    const ids = new MessageIds(
      keyed
        ? { keyOf: (m) => m.role + JSON.stringify(m.tool_calls?.[0]?.id ?? m.tool_call_id ?? "") }
        : {},
    );
    const s = openaiSession(100);
    const first = ids.request(s);
    ids.accepted(first);
    const again = [...s, s[3]]; // message 3 (in the run) sent once more at the end
    const r = ids.request(again);
    assert.ok(r.run > 3);
    assert.equal(r.ids[3], first.ids[3]);
    assert.notEqual(r.ids[again.length - 1], r.ids[3], keyed ? "keyed" : "by object");
    assert.equal(new Set(r.ids).size, again.length);
    assert.equal(JSON.parse(texts(r)).length, 1);
  }
});

test("new objects under the same keys are a run; a changed one among them is found by the check", () => {
  const ids = new MessageIds({ keyOf: (m) => m.info?.id });
  const s = Array.from({ length: 150 }, (_, i) => ({ info: { id: `m${i}` }, text: `t${i}` }));
  const first = ids.request(s);
  ids.accepted(first);
  const copy = structuredClone(s);
  copy[10].text = "edited by the host";
  const second = ids.request(copy);
  assert.equal(second.run, 150 - 64);
  assert.equal(texts(second), "[]");
  ids.accepted(second);
  assert.equal(ids.check(), 1);
  const third = ids.request(structuredClone(copy));
  assert.deepEqual(
    [...third.fresh.keys()].filter((i) => third.fresh[i]),
    [10],
  );
  assert.equal(JSON.parse(texts(third))[0].text, "edited by the host");
});

test("a message JSON cannot write fails that request open (E_ARG); the next request is whole", async () => {
  const [c, ref] = [await open(), await open()];
  const s = openaiSession(10);
  await both(c, ref, s.slice(0, 11), "openai");
  // Three new messages, the second with a BigInt: the first was staged before the second threw.
  const bad = [...s.slice(0, 12), { role: "user", content: "n", n: 10n }, s[12]];
  const hit = await c.transform(bad, { ...OPTS, format: "openai" });
  assert.equal(hit.stats.fail_open, true);
  assert.equal(hit.stats.error.code, "E_ARG");
  assert.equal(hit.messages, bad, "the request goes out as it came");
  // Nothing of the failed request's staging is left over: the next one matches a fresh engine.
  await both(c, ref, s.slice(0, 15), "openai");
  assert.equal((await c.transform(s, { ...OPTS, format: "openai" })).stats.fail_open, false);
  await c.close();
  await ref.close();
});
