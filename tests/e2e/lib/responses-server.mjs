// A scripted OpenAI Responses upstream on 127.0.0.1 for end-to-end tests of the Codex CLI (and of a
// proxy placed between Codex and the upstream).
//
//   const srv = await startResponsesServer({ script: [{ tool: "exec_command", args: { cmd: "echo hi" } }, { text: "done" }] });
//   srv.url            // "http://127.0.0.1:<port>/v1"  (Codex model_providers.*.base_url; it appends /responses)
//   srv.requests       // every request in arrival order (same record as ./anthropic-server.mjs)
//   srv.agentRequests()// the ones whose `tools` contain a shell tool (exec_command, shell, shell_command, local_shell)
//   await srv.close();
//
// Endpoints: POST …/responses: SSE when body.stream, else the response object as JSON;
// GET …/models → {object:"list", data:[], models:[]}; any other GET/HEAD → 200 {}; else 404.
//
// A step is one response (output items in this order: reasoning, message, function/custom calls):
//   { text }                                      an assistant message with one output_text part
//   { tool, args, id? }                           one function_call (args: object → JSON, or a raw string)
//   { calls: [{ tool, args, id? } | { custom, input, id? }, ...] }   several calls in one response
//   { tool, namespace, args }                     a namespaced function_call: Codex calls MCP tools as
//                                                 { namespace: "mcp__<server>", name: "<tool>" }
//   { custom, input }                             one custom_tool_call (freeform tools, e.g. apply_patch)
//   { toolSearch: { query, limit? } | "query" }   a client-executed tool_search_call (Codex answers with a
//                                                 tool_search_output item listing the matching tools)
//   { reasoning, encryptedContent?, summary? }    a reasoning item: summary text streamed as
//                                                 reasoning_summary_text deltas; encrypted_content
//                                                 (default: deterministic "gAAAAB…" per request)
//   { usage: {...} }                              merged into response.completed's usage
//   { delayMs, headersDelayMs }                   pacing for this answer only
//   { status, error, type?, code? }               an HTTP error answer ({error:{message,type,code}})
//   { failed: "message" }                         HTTP 200 stream ending in response.failed
//   (body, ctx) => step                           function (may be async); ctx = { index, entry, requests, agentRequests }
// Non-agent requests get `auxText`; an exhausted script answers `finalText`.
//
// Options: { script, log, finalText, auxText, model, port, host, agentTools, delayMs, headersDelayMs,
//   chunkSize, compress } as in ./anthropic-server.mjs.
//
// Standalone:  node lib/responses-server.mjs [--port N] [--log F] [--script steps.json] [--delay ms]

import fs from "node:fs";
import crypto from "node:crypto";
import { fileURLToPath } from "node:url";
import { startRecordingServer, pieces } from "./upstream-core.mjs";

export { hrNow, parseSSE, rawText, timedRequest } from "./upstream-core.mjs";

export const DEFAULT_RESPONSES_MODEL = "gpt-mock";
export const SHELL_TOOLS = ["exec_command", "shell", "shell_command", "local_shell"];

export async function startResponsesServer({
  script = [],
  log,
  finalText = "Done.",
  auxText = "ok",
  model,
  port = 0,
  host = "127.0.0.1",
  agentTools = SHELL_TOOLS,
  delayMs = 0,
  headersDelayMs = 0,
  chunkSize = 24,
  compress = null,
} = {}) {
  let idSeq = 0;
  const isAgent = (body) =>
    Array.isArray(body?.tools) &&
    body.tools.some((t) => agentTools.includes(t?.name) || agentTools.includes(t?.type));

  const core = await startRecordingServer({
    script,
    log,
    port,
    host,
    isAgent,
    compress,
    delayMs,
    headersDelayMs,
    handle: async (ctx) => {
      const { req, path, body, entry } = ctx;
      if (req.method === "GET" || req.method === "HEAD") {
        return ctx.json(
          200,
          /\/models\/?$/.test(path) ? { object: "list", data: [], models: [] } : {},
        );
      }
      if (req.method !== "POST" || !/\/responses\/?$/.test(path)) {
        return ctx.json(404, {
          error: {
            message: `no route ${req.method} ${req.url}`,
            type: "invalid_request_error",
            code: "not_found",
          },
        });
      }
      if (!body) {
        return ctx.json(400, {
          error: {
            message: entry.bodyError ?? "empty body",
            type: "invalid_request_error",
            code: null,
          },
        });
      }
      const reply = await ctx.nextStep({ auxText, finalText });
      entry.reply = reply;
      if (reply.status && reply.status >= 400) {
        return ctx.json(reply.status, {
          error: {
            message: reply.error ?? "scripted error",
            type: reply.type ?? (reply.status >= 500 ? "server_error" : "invalid_request_error"),
            code: reply.code ?? null,
          },
        });
      }
      const seq = () => String(++idSeq).padStart(4, "0");
      const response = buildResponse(reply, {
        id: `resp_mock_${entry.n}`,
        model: body.model ?? model ?? DEFAULT_RESPONSES_MODEL,
        seq,
        encryptedFor: (text) =>
          "gAAAAB" +
          Buffer.from(
            `mock-encrypted:${entry.n}:` +
              crypto.createHash("sha256").update(String(text)).digest("hex"),
          ).toString("base64"),
        inputTokens: Math.max(1, Math.ceil(entry.decoded.length / 4)),
        body,
      });
      entry.response = response;
      if (body.stream) {
        return ctx.sse(sseEvents(response, chunkSize, reply), {
          delayMs: reply.delayMs ?? delayMs,
          headersDelayMs: reply.headersDelayMs ?? headersDelayMs,
          headers: { "x-request-id": `req_mock_${entry.n}` },
        });
      }
      return ctx.json(200, response, { "x-request-id": `req_mock_${entry.n}` });
    },
  });

  return { ...core, url: `${core.origin}/v1` };
}

/** The complete response object for a step (what response.completed carries). */
export function buildResponse(reply, { id, model, seq, encryptedFor, inputTokens, body = {} }) {
  const output = [];
  if (reply.reasoning != null || reply.encryptedContent != null) {
    const summary = reply.summary ?? reply.reasoning ?? "";
    output.push({
      id: `rs_mock_${seq()}`,
      type: "reasoning",
      summary: summary ? [{ type: "summary_text", text: summary }] : [],
      encrypted_content: reply.encryptedContent ?? encryptedFor(summary),
    });
  }
  if (reply.text) {
    output.push({
      id: `msg_mock_${seq()}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [], logprobs: [] }],
    });
  }
  const calls =
    reply.calls ?? (reply.tool || reply.name || reply.custom || reply.toolSearch ? [reply] : []);
  for (const c of calls) {
    const n = seq();
    if (c.toolSearch) {
      const args = typeof c.toolSearch === "string" ? { query: c.toolSearch } : c.toolSearch;
      output.push({
        id: `tsc_mock_${n}`,
        type: "tool_search_call",
        status: "completed",
        call_id: c.id ?? `call_mock_${n}`,
        execution: "client",
        arguments: args,
      });
    } else if (c.custom) {
      output.push({
        id: `ctc_mock_${n}`,
        type: "custom_tool_call",
        status: "completed",
        call_id: c.id ?? `call_mock_${n}`,
        name: c.custom,
        input: String(c.input ?? ""),
      });
    } else {
      output.push({
        id: `fc_mock_${n}`,
        type: "function_call",
        status: "completed",
        arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {}),
        call_id: c.id ?? `call_mock_${n}`,
        name: c.tool ?? c.name,
        ...(c.namespace ? { namespace: c.namespace } : {}),
      });
    }
  }
  if (!output.length) {
    output.push({
      id: `msg_mock_${seq()}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }],
    });
  }
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(output).length / 4));
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
    ...(reply.usage ?? {}),
  };
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: reply.failed ? "failed" : "completed",
    error: reply.failed ? { code: "server_error", message: String(reply.failed) } : null,
    incomplete_details: null,
    model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: body.reasoning ?? null,
    store: body.store ?? false,
    tool_choice: body.tool_choice ?? "auto",
    tools: [],
    usage,
  };
}

/** The SSE event sequence of the Responses API for a complete `response`. */
export function sseEvents(response, chunkSize = 24, reply = {}) {
  let sequence = 0;
  const ev = (type, data) => ({
    event: type,
    data: { type, sequence_number: sequence++, ...data },
  });
  const skeleton = { ...response, status: "in_progress", output: [], usage: null, error: null };
  const out = [
    ev("response.created", { response: skeleton }),
    ev("response.in_progress", { response: skeleton }),
  ];
  response.output.forEach((item, output_index) => {
    if (item.type === "reasoning") {
      out.push(
        ev("response.output_item.added", {
          output_index,
          item: { id: item.id, type: "reasoning", summary: [] },
        }),
      );
      item.summary.forEach((part, summary_index) => {
        out.push(
          ev("response.reasoning_summary_part.added", {
            item_id: item.id,
            output_index,
            summary_index,
            part: { type: "summary_text", text: "" },
          }),
        );
        for (const p of pieces(part.text, chunkSize)) {
          out.push(
            ev("response.reasoning_summary_text.delta", {
              item_id: item.id,
              output_index,
              summary_index,
              delta: p,
            }),
          );
        }
        out.push(
          ev("response.reasoning_summary_text.done", {
            item_id: item.id,
            output_index,
            summary_index,
            text: part.text,
          }),
        );
        out.push(
          ev("response.reasoning_summary_part.done", {
            item_id: item.id,
            output_index,
            summary_index,
            part,
          }),
        );
      });
    } else if (item.type === "message") {
      out.push(
        ev("response.output_item.added", {
          output_index,
          item: { ...item, status: "in_progress", content: [] },
        }),
      );
      item.content.forEach((part, content_index) => {
        out.push(
          ev("response.content_part.added", {
            item_id: item.id,
            output_index,
            content_index,
            part: { ...part, text: "" },
          }),
        );
        for (const p of pieces(part.text, chunkSize)) {
          out.push(
            ev("response.output_text.delta", {
              item_id: item.id,
              output_index,
              content_index,
              delta: p,
              logprobs: [],
            }),
          );
        }
        out.push(
          ev("response.output_text.done", {
            item_id: item.id,
            output_index,
            content_index,
            text: part.text,
            logprobs: [],
          }),
        );
        out.push(
          ev("response.content_part.done", { item_id: item.id, output_index, content_index, part }),
        );
      });
    } else if (item.type === "function_call") {
      out.push(
        ev("response.output_item.added", {
          output_index,
          item: { ...item, status: "in_progress", arguments: "" },
        }),
      );
      for (const p of pieces(item.arguments, chunkSize, 2)) {
        out.push(
          ev("response.function_call_arguments.delta", {
            item_id: item.id,
            output_index,
            delta: p,
          }),
        );
      }
      out.push(
        ev("response.function_call_arguments.done", {
          item_id: item.id,
          output_index,
          arguments: item.arguments,
        }),
      );
    } else if (item.type === "custom_tool_call") {
      out.push(
        ev("response.output_item.added", {
          output_index,
          item: { ...item, status: "in_progress", input: "" },
        }),
      );
      for (const p of pieces(item.input, chunkSize, 2)) {
        out.push(
          ev("response.custom_tool_call_input.delta", { item_id: item.id, output_index, delta: p }),
        );
      }
      out.push(
        ev("response.custom_tool_call_input.done", {
          item_id: item.id,
          output_index,
          input: item.input,
        }),
      );
    } else {
      out.push(
        ev("response.output_item.added", {
          output_index,
          item: { ...item, status: "in_progress" },
        }),
      );
    }
    out.push(ev("response.output_item.done", { output_index, item }));
  });
  if (reply.failed) out.push(ev("response.failed", { response }));
  else out.push(ev("response.completed", { response }));
  return out;
}

// ---- helpers for assertions on recorded bodies ----------------------------------------------

/** Names of the tools advertised in a Responses body (hosted tools by their type). */
export function toolNames(body) {
  return (body?.tools ?? []).map((t) => t.name ?? t.type);
}

/** Text of a message item's content (string | parts). */
export function contentText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((p) => (typeof p === "string" ? p : (p.text ?? ""))).join("");
  return String(content);
}

/** Items of the given type(s) in `input`, with their index: [{ i, item }]. */
export function findItems(body, ...types) {
  return (body?.input ?? [])
    .map((item, i) => ({ i, item }))
    .filter(({ item }) => !types.length || types.includes(item.type ?? "message"));
}

/** function_call_output / custom_tool_call_output items: [{ id (call_id), text }]. */
export function toolOutputs(body) {
  return findItems(body, "function_call_output", "custom_tool_call_output").map(({ item }) => ({
    id: item.call_id,
    text:
      typeof item.output === "string"
        ? item.output
        : contentText(item.output?.content ?? item.output),
  }));
}

/** function_call / custom_tool_call items: [{ id (call_id), name, args }]. */
export function toolCalls(body) {
  return findItems(body, "function_call", "custom_tool_call").map(({ item }) => ({
    id: item.call_id,
    name: item.name,
    args: item.arguments ?? item.input,
  }));
}

/** Text of the last user message item. */
export function lastUserText(body) {
  const u = findItems(body, "message")
    .filter(({ item }) => item.role === "user")
    .at(-1);
  return u ? contentText(u.item.content) : "";
}

/** Every user message text, in order (environment context, prompts). */
export function userTexts(body) {
  return findItems(body, "message")
    .filter(({ item }) => item.role === "user")
    .map(({ item }) => contentText(item.content));
}

// ---- standalone -------------------------------------------------------------------------------
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const arg = (k) => {
    const i = process.argv.indexOf(k);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const script = arg("--script") ? JSON.parse(fs.readFileSync(arg("--script"), "utf8")) : [];
  const srv = await startResponsesServer({
    script,
    log: arg("--log"),
    port: Number(arg("--port") ?? 0),
    delayMs: Number(arg("--delay") ?? 0),
  });
  console.log(srv.url);
  process.on("SIGINT", () => srv.close().then(() => process.exit(0)));
  process.on("SIGTERM", () => srv.close().then(() => process.exit(0)));
}
