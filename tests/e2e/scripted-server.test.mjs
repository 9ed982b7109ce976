// Unit test of the scripted server alone (no host binaries; runs in well under a second).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, toolNames, lastUserText, toolResults } from "./lib/scripted-server.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const TOOLS = [{ type: "function", function: { name: "bash", parameters: { type: "object" } } }];

async function post(srv, body) {
  const res = await fetch(`${srv.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** Reassemble an SSE stream into { content, reasoning, tool_calls, finish, usage }. */
function collect(sse) {
  const out = {
    content: "",
    reasoning: "",
    tool_calls: [],
    finish: null,
    usage: null,
    done: false,
  };
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const data = line.slice(6);
    if (data === "[DONE]") {
      out.done = true;
      continue;
    }
    const chunk = JSON.parse(data);
    if (chunk.usage) out.usage = chunk.usage;
    for (const c of chunk.choices) {
      out.content += c.delta.content ?? "";
      out.reasoning += c.delta.reasoning_content ?? "";
      for (const tc of c.delta.tool_calls ?? []) {
        const slot = (out.tool_calls[tc.index] ??= { id: null, name: "", arguments: "" });
        if (tc.id) slot.id = tc.id;
        if (tc.function?.name) slot.name += tc.function.name;
        slot.arguments += tc.function?.arguments ?? "";
      }
      if (c.finish_reason) out.finish = c.finish_reason;
    }
  }
  return out;
}

test("scripted server: steps, functions, parallel calls, aux requests, errors, log", async () => {
  const dir = scratchDir("e2e-srv-");
  const log = path.join(dir, "req.jsonl");
  const srv = await startServer({
    log,
    script: [
      { tool: "bash", args: { command: "echo hi" }, reasoning: "think" },
      (body) => ({
        text: `results: ${toolResults(body)
          .map((t) => t.text)
          .join(",")} / ${lastUserText(body)}`,
      }),
      {
        calls: [
          { tool: "a", args: { x: 1 } },
          { tool: "b", args: '{"y":2}' },
        ],
      },
      { status: 400, error: "context too long" },
    ],
  });
  try {
    // 1: streamed tool call (with reasoning)
    let r = collect(
      (
        await post(srv, {
          model: "m",
          stream: true,
          tools: TOOLS,
          messages: [{ role: "user", content: "go" }],
        })
      ).text,
    );
    assert.equal(r.done, true);
    assert.equal(r.finish, "tool_calls");
    assert.equal(r.reasoning, "think");
    assert.deepEqual(r.tool_calls, [
      { id: "call_1", name: "bash", arguments: '{"command":"echo hi"}' },
    ]);
    assert.ok(r.usage.prompt_tokens > 0);

    // a request without tools (title generation) does not consume a step
    const aux = JSON.parse(
      (await post(srv, { model: "m", messages: [{ role: "user", content: "title?" }] })).text,
    );
    assert.equal(aux.choices[0].message.content, "Mock title");

    // 2: function step sees the body; non-streamed JSON answer
    const body2 = {
      model: "m",
      tools: TOOLS,
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "hi\n" },
      ],
    };
    const j = JSON.parse((await post(srv, body2)).text);
    assert.equal(j.choices[0].message.content, "results: hi\n / go");
    assert.equal(j.choices[0].finish_reason, "stop");

    // 3: parallel calls
    r = collect((await post(srv, { model: "m", stream: true, tools: TOOLS, messages: [] })).text);
    assert.deepEqual(
      r.tool_calls.map((t) => [t.name, JSON.parse(t.arguments)]),
      [
        ["a", { x: 1 }],
        ["b", { y: 2 }],
      ],
    );

    // 4: scripted error
    const e = await post(srv, { model: "m", stream: true, tools: TOOLS, messages: [] });
    assert.equal(e.status, 400);
    assert.match(e.text, /context too long/);

    // exhausted → final text
    r = collect((await post(srv, { model: "m", stream: true, tools: TOOLS, messages: [] })).text);
    assert.equal(r.content, "Done.");
    assert.equal(srv.remaining(), 0);

    const models = await (await fetch(`${srv.url}/models`)).json();
    assert.equal(models.data[0].id, "mock-model");

    assert.equal(srv.agentRequests().length, 5);
    assert.deepEqual(toolNames(srv.agentRequests()[0].body), ["bash"]);
    const logged = fs
      .readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(logged.filter((l) => l.method).length, srv.requests.length);
  } finally {
    await srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
