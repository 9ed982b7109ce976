// End-to-end harness self-test for the real Claude Code and Codex CLIs, headless and offline, directly
// against the scripted upstreams (no proxy in between). Run under Node 20:
//   cd tests/e2e && npm install && node --test cli-harness.test.mjs
// These are the checks the proxy tests build on: when one fails here, the harness (or the pinned CLI)
// is broken, not the proxy.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  startAnthropicServer,
  toolResults,
  toolUses,
  findBlocks,
  toolNames as anthropicToolNames,
  cacheControlPaths,
  stripCacheControl,
  lastUserText,
} from "./lib/anthropic-server.mjs";
import {
  startResponsesServer,
  toolOutputs,
  toolCalls,
  findItems,
  toolNames as responsesToolNames,
  lastUserText as lastUserInputText,
  rawText,
} from "./lib/responses-server.mjs";
import {
  runClaude,
  runCodex,
  setupClaudeHome,
  setupCodexHome,
  echoMcpServer,
  codexItems,
  cleanup,
  cliPaths,
} from "./lib/cli-hosts.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const HOST_TIMEOUT = 45_000;
const TEST_TIMEOUT = 60_000;

function explain(r) {
  return (
    `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}${r.timedOut ? " TIMED OUT" : ""} after ${r.ms} ms\n` +
    `$ ${r.args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ")}\n` +
    `--- stderr (tail) ---\n${r.stderr.slice(-3000)}\n--- stdout (tail) ---\n${r.stdout.slice(-2000)}`
  );
}

function assertRanOk(r) {
  assert.equal(r.timedOut, false, explain(r));
  assert.equal(r.code, 0, explain(r));
}

const { claudeVersion, codexVersion } = cliPaths();

// ---- Claude Code ------------------------------------------------------------------------------

test(
  `Claude Code ${claudeVersion}: Bash echo hi then text; tool result and signed thinking come back in request 2`,
  { timeout: TEST_TIMEOUT },
  async () => {
    const THINKING = "The user wants me to run echo hi. I will use Bash.";
    const SIGNATURE = "EqQBCkgIARABGAIiQL7mock+signature/with+base64==";
    const up = await startAnthropicServer({
      script: [
        {
          thinking: THINKING,
          signature: SIGNATURE,
          text: "Running it.",
          tool: "Bash",
          input: { command: "echo hi", description: "Print hi" },
        },
        { text: "The command printed: hi" },
      ],
    });
    const home = setupClaudeHome({ server: up });
    try {
      const r = await runClaude({ home, prompt: "please run echo hi", timeoutMs: HOST_TIMEOUT });
      assertRanOk(r);
      assert.equal(r.result?.subtype, "success", explain(r));
      assert.equal(r.result?.result, "The command printed: hi");
      assert.equal(r.result?.session_id, home.sessionId);

      const reqs = r.requests.filter((q) => q.method === "POST");
      assert.equal(reqs.length, 2, `expected 2 POSTs, got ${reqs.map((q) => q.url).join(", ")}`);
      for (const q of reqs) {
        assert.equal(q.path, "/v1/messages");
        assert.equal(q.query.beta, "true");
        assert.equal(q.agent, true);
        assert.equal(q.body.stream, true);
        assert.equal(q.headers["anthropic-version"], "2023-06-01");
        assert.equal(q.headers["x-api-key"], "sk-ant-mock");
        assert.equal(q.headers["x-claude-code-session-id"], home.sessionId);
        assert.match(q.headers["anthropic-beta"], /claude-code-20250219/);
        assert.equal(q.encoding, null, "Claude Code does not compress request bodies");
        assert.equal(q.raw.length, Number(q.headers["content-length"]));
        assert.ok(
          q.tFirstByte >= q.tArrive && q.tEnd >= q.tFirstByte,
          "timestamps recorded in order",
        );
        assert.deepEqual(q.sent.map((s) => s.event).slice(0, 2), ["message_start", "ping"]);
        assert.equal(q.sent.at(-1).event, "message_stop");
      }
      const [q1, q2] = reqs;
      assert.ok(anthropicToolNames(q1.body).includes("Bash"));
      assert.equal(lastUserText(q1.body).endsWith("please run echo hi"), true);

      // Request 2: the assistant turn [thinking, text, tool_use] verbatim, then the tool result.
      const [thinking] = findBlocks(q2.body, "thinking");
      assert.ok(thinking, "thinking block missing from request 2");
      assert.deepEqual(thinking.block, {
        type: "thinking",
        thinking: THINKING,
        signature: SIGNATURE,
      });
      assert.equal(thinking.role, "assistant");
      const assistant = q2.body.messages[thinking.mi];
      assert.deepEqual(
        assistant.content.map((b) => b.type),
        ["thinking", "text", "tool_use"],
      );
      const [use] = toolUses(q2.body);
      assert.deepEqual(
        { name: use.name, input: use.input },
        { name: "Bash", input: { command: "echo hi", description: "Print hi" } },
      );
      assert.equal(use.id, q1.response.content.find((b) => b.type === "tool_use").id);
      const results = toolResults(q2.body);
      assert.equal(results.length, 1);
      assert.equal(results[0].id, use.id);
      assert.equal(results[0].text.trim(), "hi");
      assert.equal(results[0].isError, false);

      // What a trimming proxy must keep: tools and system identical, the cache_control layout.
      assert.equal(
        JSON.stringify(q2.body.tools),
        JSON.stringify(q1.body.tools),
        "tools changed between requests",
      );
      assert.equal(
        JSON.stringify(q2.body.system),
        JSON.stringify(q1.body.system),
        "system changed between requests",
      );
      assert.match(q1.body.system[0].text, /^x-anthropic-billing-header: cc_version=/);
      assert.deepEqual(cacheControlPaths(q1.body), [
        "system[1]",
        "system[2]",
        `messages[${q1.body.messages.length - 1}].content[0]`,
      ]);
      const last = q2.body.messages.length - 1;
      assert.deepEqual(cacheControlPaths(q2.body), [
        "system[1]",
        "system[2]",
        `messages[${last}].content[${q2.body.messages[last].content.length - 1}]`,
      ]);
    } finally {
      await up.close();
      cleanup(home);
    }
  },
);

test(
  `Claude Code ${claudeVersion}: MCP echo tool via ToolSearch, result in the next request`,
  { timeout: TEST_TIMEOUT },
  async () => {
    const up = await startAnthropicServer({
      script: [
        { tool: "ToolSearch", input: { query: "select:mcp__echo__echo" } },
        { tool: "mcp__echo__echo", input: { text: "ping" } },
        { text: "The echo server said echo:ping" },
      ],
    });
    const logDir = scratchDir("e2e-echo-mcp-");
    const mcpLog = path.join(logDir, "calls.jsonl");
    const home = setupClaudeHome({ server: up, mcpServers: echoMcpServer({ log: mcpLog }) });
    try {
      const r = await runClaude({
        home,
        prompt: "use the echo tool on ping",
        timeoutMs: HOST_TIMEOUT,
      });
      assertRanOk(r);
      assert.equal(r.result?.result, "The echo server said echo:ping", explain(r));
      const [q1, q2, q3] = r.requests.filter((q) => q.method === "POST");
      assert.ok(q3, "expected 3 requests");

      // MCP tools are deferred: not in tools[], only named in the system message; ToolSearch loads them.
      assert.ok(
        !anthropicToolNames(q1.body).includes("mcp__echo__echo"),
        "MCP tool unexpectedly advertised up front",
      );
      assert.match(
        JSON.stringify(q1.body.messages),
        /mcp__echo__echo/,
        "deferred MCP tool not listed in the messages",
      );
      const echoTool = q2.body.tools.find((t) => t.name === "mcp__echo__echo");
      assert.ok(echoTool, "ToolSearch did not add mcp__echo__echo to tools[]");
      assert.equal(echoTool.defer_loading, true);
      assert.deepEqual(findBlocks(q2.body, "tool_result")[0].block.content, [
        { type: "tool_reference", tool_name: "mcp__echo__echo" },
      ]);

      const res = toolResults(q3.body).find(
        (t) => t.id === toolUses(q3.body).find((u) => u.name === "mcp__echo__echo").id,
      );
      assert.equal(res?.text, "echo:ping");
      assert.equal(res.isError, false);
      const calls = fs
        .readFileSync(mcpLog, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((e) => e.kind === "call");
      assert.deepEqual(
        calls.map((c) => [c.name, c.arguments]),
        [["echo", { text: "ping" }]],
      );

      // Without the allow rule, -p mode denies the MCP tool (and says so in the tool result).
      const up2 = await startAnthropicServer({
        script: [{ tool: "mcp__echo__echo", input: { text: "ping" } }, { text: "ok" }],
      });
      try {
        const denied = await runClaude({
          server: up2,
          home: { ...home, sessionId: null },
          baseURL: up2.url,
          prompt: "echo",
          allowedTools: ["Bash"],
          timeoutMs: HOST_TIMEOUT,
        });
        assertRanOk(denied);
        const [t] = toolResults(up2.requests.at(-1).body);
        assert.equal(t.isError, true);
        assert.match(t.text, /permission/i);
      } finally {
        await up2.close();
      }
    } finally {
      await up.close();
      cleanup(home);
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  },
);

test(
  `Claude Code ${claudeVersion}: --resume carries turn 1 into turn 2`,
  { timeout: TEST_TIMEOUT },
  async () => {
    const up = await startAnthropicServer({
      script: [
        { tool: "Bash", input: { command: "echo hi" } },
        { text: "Turn one: hi" },
        (body) => ({
          text: `Turn two saw ${toolResults(body)
            .map((t) => t.text.trim())
            .join(",")}`,
        }),
      ],
    });
    const home = setupClaudeHome({ server: up });
    try {
      const r1 = await runClaude({
        home,
        prompt: "turn one: run echo hi",
        timeoutMs: HOST_TIMEOUT,
      });
      assertRanOk(r1);
      const r2 = await runClaude({
        home,
        prompt: "turn two: what did it print?",
        resume: true,
        timeoutMs: HOST_TIMEOUT,
      });
      assertRanOk(r2);
      assert.equal(r2.result?.result, "Turn two saw hi");
      assert.equal(r2.sessionId, r1.sessionId);
      assert.equal(r1.requests.length, 2);
      assert.equal(r2.requests.length, 1);
      const [a, b] = [r1.requests[1].body, r2.requests[0].body];
      assert.equal(r2.requests[0].headers["x-claude-code-session-id"], r1.sessionId);
      // Turn 2 = turn 1's last request + [assistant text, user prompt], modulo the rolling cache marker.
      const prev = stripCacheControl(a.messages);
      assert.deepEqual(stripCacheControl(b.messages).slice(0, prev.length), prev);
      assert.deepEqual(
        b.messages.slice(prev.length).map((m) => m.role),
        ["assistant", "user"],
      );
      assert.equal(lastUserText(b), "turn two: what did it print?");
      for (const k of Object.keys(b))
        if (k !== "messages")
          assert.equal(JSON.stringify(b[k]), JSON.stringify(a[k]), `${k} changed across --resume`);
    } finally {
      await up.close();
      cleanup(home);
    }
  },
);

// ---- Codex ------------------------------------------------------------------------------------

test(
  `Codex ${codexVersion}: exec_command echo hi then text; output and encrypted reasoning come back in request 2`,
  { timeout: TEST_TIMEOUT },
  async () => {
    const ENCRYPTED = "gAAAAABpMockEncryptedReasoning_" + "x".repeat(40) + "==";
    const up = await startResponsesServer({
      script: [
        {
          reasoning: "Run echo hi with exec_command.",
          encryptedContent: ENCRYPTED,
          tool: "exec_command",
          args: { cmd: "echo hi" },
        },
        { text: "The command printed: hi" },
      ],
    });
    const home = setupCodexHome({ server: up });
    try {
      const r = await runCodex({ home, prompt: "please run echo hi", timeoutMs: HOST_TIMEOUT });
      assertRanOk(r);
      assert.equal(r.result, "The command printed: hi", explain(r));
      const [cmd] = codexItems(r.events, "command_execution");
      assert.equal(cmd?.aggregated_output, "hi\n");
      assert.equal(cmd.exit_code, 0);

      const reqs = r.requests.filter((q) => q.method === "POST");
      assert.equal(
        reqs.length,
        2,
        `expected 2 POSTs, got ${r.requests.map((q) => q.method + " " + q.url).join(", ")}`,
      );
      for (const q of reqs) {
        assert.equal(q.path, "/v1/responses");
        assert.equal(q.agent, true);
        assert.equal(q.body.stream, true);
        assert.equal(q.body.store, false);
        assert.deepEqual(q.body.include, ["reasoning.encrypted_content"]);
        assert.equal(q.body.prompt_cache_key, r.threadId, "prompt_cache_key is the thread id");
        assert.equal(q.body.previous_response_id, undefined);
        assert.equal(q.body.instructions, undefined);
        assert.equal(q.headers.authorization, "Bearer sk-mock");
        assert.equal(q.headers["session-id"], r.threadId);
        assert.equal(q.headers.originator, "codex_exec");
        assert.equal(q.encoding, null, "no request compression for a custom provider");
        assert.ok(q.tFirstByte >= q.tArrive && q.tEnd >= q.tFirstByte);
        assert.deepEqual(q.sent.map((s) => s.event).slice(0, 2), [
          "response.created",
          "response.in_progress",
        ]);
        assert.equal(q.sent.at(-1).event, "response.completed");
      }
      const [q1, q2] = reqs;
      const shell = q1.body.tools.find((t) => t.name === "exec_command");
      assert.ok(shell?.parameters?.properties?.cmd, "exec_command with a cmd parameter");
      assert.deepEqual(shell.parameters.required, ["cmd"]);
      assert.equal(lastUserInputText(q1.body), "please run echo hi");

      // Request 2: the reasoning item verbatim (plus "content": null), the call, its output.
      const sentReasoning = q1.response.output.find((o) => o.type === "reasoning");
      const [{ item: reasoning }] = findItems(q2.body, "reasoning");
      assert.equal(reasoning.id, sentReasoning.id);
      assert.equal(reasoning.encrypted_content, ENCRYPTED);
      assert.deepEqual(reasoning.summary, sentReasoning.summary);
      const [call] = toolCalls(q2.body);
      const sentCall = q1.response.output.find((o) => o.type === "function_call");
      assert.deepEqual(call, {
        id: sentCall.call_id,
        name: "exec_command",
        args: JSON.stringify({ cmd: "echo hi" }),
      });
      const [out] = toolOutputs(q2.body);
      assert.equal(out.id, sentCall.call_id);
      assert.match(out.text, /Process exited with code 0/);
      assert.match(out.text, /Output:\nhi\n?$/);
      // Append-only input, identical tools (raw bytes).
      const inputOf = (q) => {
        const s = rawText(q);
        return s.slice(s.indexOf('"input":['), s.indexOf('],"tools":'));
      };
      assert.ok(
        inputOf(q2).startsWith(inputOf(q1)),
        "input of request 2 does not extend request 1 byte for byte",
      );
      assert.equal(JSON.stringify(q2.body.tools), JSON.stringify(q1.body.tools));
    } finally {
      await up.close();
      cleanup(home);
    }
  },
);

test(
  `Codex ${codexVersion}: MCP echo tool via tool_search, namespaced call, result in the next request`,
  { timeout: TEST_TIMEOUT },
  async () => {
    const logDir = scratchDir("e2e-echo-mcp-");
    const mcpLog = path.join(logDir, "calls.jsonl");
    const up = await startResponsesServer({
      script: [
        { toolSearch: { query: "echo", limit: 4 } },
        { tool: "echo", namespace: "mcp__echo", args: { text: "ping" } },
        { text: "The echo server said echo:ping" },
      ],
    });
    const home = setupCodexHome({ server: up, mcpServers: echoMcpServer({ log: mcpLog }) });
    try {
      const r = await runCodex({
        home,
        prompt: "use the echo tool on ping",
        timeoutMs: HOST_TIMEOUT,
      });
      assertRanOk(r);
      assert.equal(r.result, "The echo server said echo:ping", explain(r));
      const [q1, q2, q3] = r.requests.filter((q) => q.method === "POST");
      assert.ok(q3, "expected 3 requests");
      // MCP tools are deferred: only the namespace is named in the developer message.
      assert.ok(!responsesToolNames(q1.body).some((n) => /echo/.test(n)));
      assert.match(rawText(q1), /Deferred tool namespaces:\\n- mcp__echo/);
      const [{ item: search }] = findItems(q2.body, "tool_search_output");
      assert.equal(search.execution, "client");
      assert.equal(search.tools[0].type, "namespace");
      assert.equal(search.tools[0].name, "mcp__echo");
      assert.deepEqual(
        search.tools[0].tools.map((t) => t.name),
        ["echo"],
      );
      assert.equal(
        JSON.stringify(q2.body.tools),
        JSON.stringify(q1.body.tools),
        "tool_search does not change tools[]",
      );

      const [{ item: call }] = findItems(q3.body, "function_call");
      assert.deepEqual([call.namespace, call.name], ["mcp__echo", "echo"]);
      const out = toolOutputs(q3.body).find((o) => o.id === call.call_id);
      assert.match(out?.text ?? "", /echo:ping$/);
      const [mcp] = codexItems(r.events, "mcp_tool_call");
      assert.equal(mcp?.server, "echo");
      assert.equal(mcp.tool, "echo");
      const calls = fs
        .readFileSync(mcpLog, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((e) => e.kind === "call");
      assert.deepEqual(
        calls.map((c) => [c.name, c.arguments]),
        [["echo", { text: "ping" }]],
      );
    } finally {
      await up.close();
      cleanup(home);
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  },
);

test(
  `Codex ${codexVersion}: exec resume carries turn 1 into turn 2`,
  { timeout: TEST_TIMEOUT },
  async () => {
    const up = await startResponsesServer({
      script: [
        { reasoning: "run it", tool: "exec_command", args: { cmd: "echo hi" } },
        { text: "Turn one: hi" },
        (body) => ({
          text: `Turn two saw ${toolOutputs(body)
            .map((o) => o.text.trim().split("\n").at(-1))
            .join(",")}`,
        }),
      ],
    });
    const home = setupCodexHome({ server: up });
    try {
      const r1 = await runCodex({ home, prompt: "turn one: run echo hi", timeoutMs: HOST_TIMEOUT });
      assertRanOk(r1);
      const r2 = await runCodex({
        home,
        prompt: "turn two: what did it print?",
        resume: true,
        timeoutMs: HOST_TIMEOUT,
      });
      assertRanOk(r2);
      assert.equal(r2.result, "Turn two saw hi", explain(r2));
      assert.equal(r2.threadId, r1.threadId);
      assert.equal(r1.requests.length, 2);
      assert.equal(r2.requests.length, 1);
      const [a, b] = [r1.requests[1], r2.requests[0]];
      assert.equal(b.body.prompt_cache_key, a.body.prompt_cache_key);
      assert.equal(b.body.prompt_cache_key, r1.threadId);
      const inputOf = (q) => {
        const s = rawText(q);
        return s.slice(s.indexOf('"input":['), s.indexOf('],"tools":'));
      };
      assert.ok(
        inputOf(b).startsWith(inputOf(a)),
        "turn 2 input does not extend turn 1 byte for byte",
      );
      assert.deepEqual(
        b.body.input.slice(a.body.input.length).map((i) => `${i.type}:${i.role}`),
        ["message:assistant", "message:user"],
      );
      assert.equal(lastUserInputText(b.body), "turn two: what did it print?");
      for (const k of Object.keys(b.body)) {
        if (k === "input" || k === "client_metadata") continue; // client_metadata: same values, HashMap key order
        assert.equal(
          JSON.stringify(b.body[k]),
          JSON.stringify(a.body[k]),
          `${k} changed across resume`,
        );
      }
    } finally {
      await up.close();
      cleanup(home);
    }
  },
);
