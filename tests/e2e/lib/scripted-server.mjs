// A scripted OpenAI-compatible Chat Completions server for end-to-end tests.
//
//   const srv = await startServer({ script: [{ tool: "bash", args: { command: "echo hi" } }, { text: "done" }], log: "/tmp/req.jsonl" });
//   srv.url            // "http://127.0.0.1:<port>/v1"  (give it to the host as baseURL)
//   srv.requests       // every request, in arrival order: { n, t, method, url, agent, userAgent, body,
//                      //   reply (the step used), response (the assistant message sent back) }
//   srv.agentRequests()// only the ones that consumed (or would have consumed) a script step
//   await srv.close();
//
// A step is one of
//   { text }                                   plain assistant text
//   { tool, args, id? }                        one tool call (args: object, or a raw JSON string)
//   { calls: [{ tool, args, id? }, ...] }      parallel tool calls in one assistant message
//   { reasoning }                              may accompany any of the above: streamed as `reasoning_content`
//   { usage: {prompt_tokens, completion_tokens} }   overrides the usage figures (default: estimated)
//   { status, error }                          an HTTP error answer (e.g. 400 context overflow, 500)
//   (body, ctx) => step                        a function (may be async) deciding the reply from the request
//                                              the model received; ctx = { index, requests, agentRequests }
//
// Only "agent" requests (a non-empty `tools` array) consume steps. Everything else (OpenCode's title
// generation, summaries) gets `auxText`. When the script is exhausted, agent requests get `finalText`.
// Run standalone for manual poking:  node lib/scripted-server.mjs [--port N] [--log F] [--script steps.json]

import http from "node:http";
import fs from "node:fs";
import { fileURLToPath } from "node:url";

export const DEFAULT_MODEL = "mock-model";

export async function startServer({
  script = [],
  log,
  finalText = "Done.",
  auxText = "Mock title",
  model = DEFAULT_MODEL,
  port = 0,
  host = "127.0.0.1",
  chunkSize = 64,
} = {}) {
  const steps = [...script];
  const requests = [];
  let cursor = 0;
  let callSeq = 0;
  if (log) fs.writeFileSync(log, "");

  const isAgent = (body) => Array.isArray(body?.tools) && body.tools.length > 0;

  async function nextReply(body) {
    if (!isAgent(body)) return { text: auxText };
    if (cursor >= steps.length) return { text: finalText };
    const index = cursor++;
    let step = steps[index];
    if (typeof step === "function") {
      step = await step(body, { index, requests, agentRequests: requests.filter((r) => r.agent) });
    }
    if (typeof step === "string") step = { text: step };
    return step ?? { text: finalText };
  }

  function record(req, body, raw) {
    const entry = {
      n: requests.length + 1,
      t: Date.now(),
      method: req.method,
      url: req.url,
      agent: isAgent(body),
      userAgent: req.headers["user-agent"] ?? null,
      body: body ?? (raw || null),
    };
    requests.push(entry);
    if (log) fs.appendFileSync(log, JSON.stringify(entry) + "\n");
    return entry;
  }

  const server = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const raw = Buffer.concat(chunks).toString("utf8");

      if (req.method === "GET" && /\/models\/?(\?.*)?$/.test(req.url)) {
        record(req, null, raw);
        return json(res, 200, {
          object: "list",
          data: [{ id: model, object: "model", created: 0, owned_by: "scripted" }],
        });
      }
      if (req.method !== "POST" || !/\/chat\/completions\/?(\?.*)?$/.test(req.url)) {
        record(req, null, raw);
        return json(res, 404, {
          error: { message: `no route ${req.method} ${req.url}`, type: "not_found" },
        });
      }

      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        record(req, null, raw);
        return json(res, 400, {
          error: { message: "invalid JSON body", type: "invalid_request_error" },
        });
      }
      const entry = record(req, body, raw);
      const reply = await nextReply(body);
      entry.reply = reply;
      if (log) fs.appendFileSync(log, JSON.stringify({ n: entry.n, reply }) + "\n");

      if (reply.status && reply.status >= 400) {
        return json(res, reply.status, {
          error: {
            message: reply.error ?? "scripted error",
            type: reply.type ?? "invalid_request_error",
            code: reply.code ?? null,
          },
        });
      }
      const msg = buildMessage(reply, () => `call_${++callSeq}`);
      entry.response = msg.message;
      const usage = reply.usage ?? estimateUsage(raw, msg);
      const id = `chatcmpl-${entry.n}`;
      const created = Math.floor(Date.now() / 1000);
      const mdl = body.model ?? model;
      if (body.stream)
        return stream(res, { id, created, model: mdl, msg, usage, chunkSize, includeUsage: true });
      return json(res, 200, {
        id,
        object: "chat.completion",
        created,
        model: mdl,
        choices: [{ index: 0, message: msg.message, finish_reason: msg.finish }],
        usage,
      });
    } catch (err) {
      try {
        json(res, 500, { error: { message: String(err?.stack ?? err), type: "server_error" } });
      } catch {
        // the client has gone: nobody to tell
      }
    }
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;

  return {
    url: `http://${host}:${actualPort}/v1`,
    port: actualPort,
    requests,
    agentRequests: () => requests.filter((r) => r.agent),
    /** Append steps (e.g. for the next turn of a multi-turn test). */
    push: (...more) => steps.push(...more),
    /** Steps not consumed yet. */
    remaining: () => steps.length - cursor,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function buildMessage(reply, newId) {
  const calls =
    reply.calls ?? (reply.tool ? [{ tool: reply.tool, args: reply.args, id: reply.id }] : []);
  const tool_calls = calls.map((c, index) => ({
    index,
    id: c.id ?? newId(),
    type: "function",
    function: {
      name: c.tool ?? c.name,
      arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {}),
    },
  }));
  const text = reply.text ?? "";
  const message = { role: "assistant", content: text || (tool_calls.length ? null : "") };
  if (reply.reasoning) message.reasoning_content = reply.reasoning;
  if (tool_calls.length) message.tool_calls = tool_calls.map(({ index, ...rest }) => rest);
  return {
    message,
    text,
    reasoning: reply.reasoning ?? "",
    tool_calls,
    finish: tool_calls.length ? "tool_calls" : "stop",
  };
}

function estimateUsage(raw, msg) {
  const prompt_tokens = Math.ceil(raw.length / 4);
  const completion_tokens = Math.max(
    1,
    Math.ceil((msg.text.length + msg.reasoning.length + JSON.stringify(msg.tool_calls).length) / 4),
  );
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function json(res, status, obj) {
  const data = JSON.stringify(obj);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
  });
  res.end(data);
}

function* pieces(s, n) {
  for (let i = 0; i < s.length; i += n) yield s.slice(i, i + n);
}

function stream(res, { id, created, model, msg, usage, chunkSize, includeUsage }) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const frame = (choices, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`,
    );
  frame([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
  for (const p of pieces(msg.reasoning, chunkSize))
    frame([{ index: 0, delta: { reasoning_content: p }, finish_reason: null }]);
  for (const p of pieces(msg.text, chunkSize))
    frame([{ index: 0, delta: { content: p }, finish_reason: null }]);
  for (const tc of msg.tool_calls) {
    frame([
      {
        index: 0,
        delta: {
          tool_calls: [
            {
              index: tc.index,
              id: tc.id,
              type: "function",
              function: { name: tc.function.name, arguments: "" },
            },
          ],
        },
        finish_reason: null,
      },
    ]);
    for (const p of pieces(tc.function.arguments, chunkSize)) {
      frame([
        {
          index: 0,
          delta: { tool_calls: [{ index: tc.index, function: { arguments: p } }] },
          finish_reason: null,
        },
      ]);
    }
  }
  frame([{ index: 0, delta: {}, finish_reason: msg.finish }]);
  if (includeUsage) frame([], { usage });
  res.write("data: [DONE]\n\n");
  res.end();
}

// ---- helpers for assertions on recorded bodies ----------------------------------------------

/** Names of the tools advertised in a Chat Completions body. */
export function toolNames(body) {
  return (body?.tools ?? []).map((t) => t.function?.name ?? t.name);
}

/** Flatten a Chat Completions message `content` (string | parts[] | null) to text. */
export function contentText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((p) => (typeof p === "string" ? p : (p.text ?? ""))).join("");
  return String(content);
}

/** The text of the last `user` message of a body. */
export function lastUserText(body) {
  const users = (body?.messages ?? []).filter((m) => m.role === "user");
  return users.length ? contentText(users.at(-1).content) : "";
}

/** Contents of all `tool` messages of a body, as text. */
export function toolResults(body) {
  return (body?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => ({ id: m.tool_call_id, text: contentText(m.content) }));
}

// ---- standalone -------------------------------------------------------------------------------
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const arg = (k) => {
    const i = process.argv.indexOf(k);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const script = arg("--script") ? JSON.parse(fs.readFileSync(arg("--script"), "utf8")) : [];
  const srv = await startServer({ script, log: arg("--log"), port: Number(arg("--port") ?? 0) });
  console.log(srv.url);
  process.on("SIGINT", () => srv.close().then(() => process.exit(0)));
  process.on("SIGTERM", () => srv.close().then(() => process.exit(0)));
}
