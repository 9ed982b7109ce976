// A scripted Anthropic Messages upstream on 127.0.0.1 for end-to-end tests of Claude Code (and of
// a proxy placed between Claude Code and the upstream).
//
//   const srv = await startAnthropicServer({ script: [{ tool: "Bash", input: { command: "echo hi" } }, { text: "done" }] });
//   srv.url            // "http://127.0.0.1:<port>"  (ANTHROPIC_BASE_URL; the client appends /v1/messages)
//   srv.requests       // every request in arrival order (see below)
//   srv.agentRequests()// the ones whose `tools` contain the shell tool (Bash): they consume script steps
//   await srv.close();
//
// Endpoints: POST …/v1/messages (any query, e.g. ?beta=true): SSE when body.stream, else JSON;
// POST …/v1/messages/count_tokens → {input_tokens}; any GET/HEAD → 200 {}; anything else → 404.
//
// A step is one assistant message (content blocks in this order: thinking, redacted_thinking, text,
// tool_use…):
//   { text }                                       text block
//   { tool, input, id? }                           one tool_use block (alias: { name, input } or args)
//   { calls: [{ tool, input, id? }, ...] }         several tool_use blocks (parallel calls)
//   { thinking, signature? }                       a thinking block (thinking_delta + signature_delta);
//                                                  default signature: deterministic base64 per request
//   { redactedThinking: "data" }                   a redacted_thinking block
//   { usage: {...} }                               merged into the usage sent (message_start/message_delta)
//   { stopReason }                                 override stop_reason (default tool_use / end_turn)
//   { delayMs, headersDelayMs }                    pacing for this answer only
//   { status, error, type? }                       an HTTP error answer ({type:"error", error:{type, message}})
//   (body, ctx) => step                            function (may be async); ctx = { index, entry, requests, agentRequests }
// Non-agent requests get `auxText`; an exhausted script answers `finalText`.
//
// Each recorded request: { n, t, method, url, path, query, httpVersion, headers, rawHeaders, raw (Buffer,
// exactly as received), decoded (Buffer after content-encoding), encoding, body (parsed JSON or null),
// bodyError, agent, reply (the step used), response (the message sent back, as JSON), status,
// tArrive, tBody, tHeaders, tFirstByte, tEnd (hi-res epoch ms), sent: [{ t, event, bytes }] }.
// `srv.events` emits "request", "first-byte" and "end" with the entry.
//
// Options: { script, log (JSON lines file), finalText, auxText, model, port, host, agentTools (["Bash"]),
//   delayMs (sleep before each SSE event: a slow upstream), headersDelayMs (before the response
//   headers), chunkSize (characters per text/thinking/json delta), compress ("gzip"|"br"|null: encode
//   responses when the client accepts it) }.
//
// Standalone:  node lib/anthropic-server.mjs [--port N] [--log F] [--script steps.json] [--delay ms]

import fs from "node:fs";
import crypto from "node:crypto";
import { fileURLToPath } from "node:url";
import { startRecordingServer, pieces } from "./upstream-core.mjs";

export { hrNow, parseSSE, rawText, timedRequest } from "./upstream-core.mjs";

export const DEFAULT_ANTHROPIC_MODEL = "claude-mock";

export async function startAnthropicServer({
  script = [],
  log,
  finalText = "Done.",
  auxText = "ok",
  model,
  port = 0,
  host = "127.0.0.1",
  agentTools = ["Bash"],
  delayMs = 0,
  headersDelayMs = 0,
  chunkSize = 24,
  compress = null,
} = {}) {
  let idSeq = 0;
  const isAgent = (body) =>
    Array.isArray(body?.tools) && body.tools.some((t) => agentTools.includes(t?.name));

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
      if (req.method === "GET" || req.method === "HEAD") return ctx.json(200, {});
      if (req.method === "POST" && /\/v1\/messages\/count_tokens\/?$/.test(path)) {
        return ctx.json(200, { input_tokens: estimateTokens(entry.decoded) });
      }
      if (req.method !== "POST" || !/\/v1\/messages\/?$/.test(path)) {
        return ctx.json(404, {
          type: "error",
          error: { type: "not_found_error", message: `no route ${req.method} ${req.url}` },
        });
      }
      if (!body) {
        return ctx.json(400, {
          type: "error",
          error: { type: "invalid_request_error", message: entry.bodyError ?? "empty body" },
        });
      }
      const reply = await ctx.nextStep({ auxText, finalText });
      entry.reply = reply;
      if (reply.status && reply.status >= 400) {
        return ctx.json(
          reply.status,
          {
            type: "error",
            error: {
              type: reply.type ?? (reply.status >= 500 ? "api_error" : "invalid_request_error"),
              message: reply.error ?? "scripted error",
            },
          },
          reply.status === 429 || reply.status === 529 ? { "retry-after": "0" } : {},
        );
      }
      const msg = buildMessage(reply, {
        id: `msg_mock_${entry.n}`,
        model: body.model ?? model ?? DEFAULT_ANTHROPIC_MODEL,
        newToolId: () => `toolu_mock_${String(++idSeq).padStart(4, "0")}`,
        signatureFor: (thinking) =>
          Buffer.from(
            `mock-signature:${entry.n}:` +
              crypto.createHash("sha256").update(thinking).digest("hex"),
          ).toString("base64"),
        inputTokens: estimateTokens(entry.decoded),
      });
      entry.response = msg;
      if (body.stream) {
        return ctx.sse(sseEvents(msg, chunkSize), {
          delayMs: reply.delayMs ?? delayMs,
          headersDelayMs: reply.headersDelayMs ?? headersDelayMs,
          headers: { "request-id": `req_mock_${entry.n}` },
        });
      }
      return ctx.json(200, msg, { "request-id": `req_mock_${entry.n}` });
    },
  });

  return { ...core, url: core.origin };
}

function estimateTokens(buf) {
  return Math.max(1, Math.ceil((buf?.length ?? 0) / 4));
}

/** The full (non-streamed) Messages API response for a step. */
export function buildMessage(reply, { id, model, newToolId, signatureFor, inputTokens }) {
  const content = [];
  if (reply.thinking != null) {
    content.push({
      type: "thinking",
      thinking: reply.thinking,
      signature: reply.signature ?? signatureFor(reply.thinking),
    });
  }
  if (reply.redactedThinking != null)
    content.push({ type: "redacted_thinking", data: reply.redactedThinking });
  if (reply.text) content.push({ type: "text", text: reply.text });
  const calls = reply.calls ?? (reply.tool || reply.name ? [reply] : []);
  for (const c of calls) {
    content.push({
      type: "tool_use",
      id: c.id ?? newToolId(),
      name: c.tool ?? c.name,
      input: c.input ?? c.args ?? {},
    });
  }
  if (!content.length) content.push({ type: "text", text: "" });
  const hasTool = content.some((b) => b.type === "tool_use");
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(content).length / 4));
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: reply.stopReason ?? (hasTool ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: outputTokens,
      ...(reply.usage ?? {}),
    },
  };
}

/** The exact SSE event sequence the Messages API sends for `msg`. */
export function sseEvents(msg, chunkSize = 24) {
  const ev = (type, data) => ({ event: type, data: { type, ...data } });
  const out = [];
  const { content, usage, stop_reason, stop_sequence, ...rest } = msg;
  out.push(
    ev("message_start", {
      message: {
        ...rest,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
  );
  out.push(ev("ping", {}));
  content.forEach((b, index) => {
    if (b.type === "thinking") {
      out.push(
        ev("content_block_start", {
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      for (const p of pieces(b.thinking, chunkSize))
        out.push(
          ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: p } }),
        );
      out.push(
        ev("content_block_delta", {
          index,
          delta: { type: "signature_delta", signature: b.signature },
        }),
      );
    } else if (b.type === "redacted_thinking") {
      out.push(
        ev("content_block_start", {
          index,
          content_block: { type: "redacted_thinking", data: b.data },
        }),
      );
    } else if (b.type === "text") {
      out.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const p of pieces(b.text, chunkSize))
        out.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: p } }));
    } else if (b.type === "tool_use") {
      out.push(
        ev("content_block_start", {
          index,
          content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
        }),
      );
      // The API opens with an empty partial_json, then streams the arguments in pieces.
      out.push(
        ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }),
      );
      for (const p of pieces(JSON.stringify(b.input), chunkSize, 2)) {
        out.push(
          ev("content_block_delta", {
            index,
            delta: { type: "input_json_delta", partial_json: p },
          }),
        );
      }
    }
    out.push(ev("content_block_stop", { index }));
  });
  out.push(
    ev("message_delta", {
      delta: { stop_reason, stop_sequence },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  out.push(ev("message_stop", {}));
  return out;
}

// ---- helpers for assertions on recorded bodies ----------------------------------------------

/** Names of the tools advertised in a Messages body. */
export function toolNames(body) {
  return (body?.tools ?? []).map((t) => t.name);
}

/** A message's content as blocks (string content → one text block). */
export function blocksOf(message) {
  const c = message?.content;
  if (c == null) return [];
  return typeof c === "string" ? [{ type: "text", text: c }] : c;
}

/** Text of a content (string | blocks), tool_result contents included. */
export function contentText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) =>
        typeof b === "string"
          ? b
          : b.type === "tool_result"
            ? contentText(b.content)
            : (b.text ?? ""),
      )
      .join("");
  }
  return String(content);
}

/** All blocks of a given type across messages, with their position: [{ mi, bi, role, block }]. */
export function findBlocks(body, type) {
  const out = [];
  (body?.messages ?? []).forEach((m, mi) =>
    blocksOf(m).forEach((block, bi) => {
      if (!type || block.type === type) out.push({ mi, bi, role: m.role, block });
    }),
  );
  return out;
}

/** tool_result blocks: [{ id, text, isError }]. */
export function toolResults(body) {
  return findBlocks(body, "tool_result").map(({ block }) => ({
    id: block.tool_use_id,
    text: contentText(block.content),
    isError: !!block.is_error,
  }));
}

/** tool_use blocks: [{ id, name, input }]. */
export function toolUses(body) {
  return findBlocks(body, "tool_use").map(({ block }) => ({
    id: block.id,
    name: block.name,
    input: block.input,
  }));
}

/** Text of the last user message (tool_result text excluded). */
export function lastUserText(body) {
  const u = (body?.messages ?? []).filter((m) => m.role === "user").at(-1);
  return blocksOf(u)
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

/** Every user text block (prompts, system reminders) in order. */
export function userTexts(body) {
  return findBlocks(body, "text")
    .filter((b) => b.role === "user")
    .map((b) => b.block.text);
}

/** Where `cache_control` sits: ["system[1]", "messages[3].content[0]", "tools[5]", …]. */
export function cacheControlPaths(body) {
  const out = [];
  (body?.tools ?? []).forEach((t, i) => t?.cache_control && out.push(`tools[${i}]`));
  if (Array.isArray(body?.system))
    body.system.forEach((b, i) => b?.cache_control && out.push(`system[${i}]`));
  (body?.messages ?? []).forEach((m, mi) => {
    if (Array.isArray(m.content))
      m.content.forEach((b, bi) => b?.cache_control && out.push(`messages[${mi}].content[${bi}]`));
  });
  return out;
}

/** A deep copy of `body` without any cache_control keys (to compare prefixes modulo the rolling marker). */
export function stripCacheControl(value) {
  if (Array.isArray(value)) return value.map(stripCacheControl);
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value))
      if (k !== "cache_control") out[k] = stripCacheControl(v);
    return out;
  }
  return value;
}

// ---- standalone -------------------------------------------------------------------------------
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const arg = (k) => {
    const i = process.argv.indexOf(k);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const script = arg("--script") ? JSON.parse(fs.readFileSync(arg("--script"), "utf8")) : [];
  const srv = await startAnthropicServer({
    script,
    log: arg("--log"),
    port: Number(arg("--port") ?? 0),
    delayMs: Number(arg("--delay") ?? 0),
  });
  console.log(srv.url);
  process.on("SIGINT", () => srv.close().then(() => process.exit(0)));
  process.on("SIGTERM", () => srv.close().then(() => process.exit(0)));
}
