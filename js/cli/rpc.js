// `smarter-compact rpc`: one JSON-RPC 2.0 request on stdin, one response on stdout — the thin
// client of seed 000 (`echo '{"jsonrpc":"2.0","id":1,"method":"tools/call",…}' | smarter-compact rpc`).
// Methods: tools/call, tools/list, initialize, ping. Results have MCP's shape.
import { version } from "../index.js";
import { asCoded } from "../errors.js";
import { MAX_LINE_BYTES } from "./mcp-transport.js";
import { ARGUMENT_CODES, errorResult, mcpTools, okResult, toolCaller } from "./tool-calls.js";

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
/** MCP protocol versions this answers `initialize` with (the client's when it is one of them). */
const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.rpcCode = code;
    this.data = data;
  }
}

/** Longest request read (the MCP server's line limit); a longer one is drained, not kept. */
const MAX_REQUEST_BYTES = MAX_LINE_BYTES;

/** The request text, or null when it is over MAX_REQUEST_BYTES (the rest is read and dropped). */
async function readStdin(stdin) {
  const chunks = [];
  let size = 0;
  for await (const c of stdin) {
    size += c.length;
    if (size <= MAX_REQUEST_BYTES) chunks.push(c);
    else chunks.length = 0;
  }
  return size > MAX_REQUEST_BYTES ? null : Buffer.concat(chunks).toString("utf8");
}

const tooLarge = () => ({
  jsonrpc: "2.0",
  id: null,
  error: {
    code: INVALID_REQUEST,
    message: `request too large: at most ${MAX_REQUEST_BYTES} bytes are read; nothing of it was used`,
  },
});

/** Answers one parsed request: the `result`, or throws an RpcError. */
async function dispatch(req, opts) {
  const params = req.params ?? {};
  switch (req.method) {
    case "initialize": {
      const asked = params.protocolVersion;
      return {
        protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
        capabilities: { tools: {} },
        serverInfo: { name: "smarter-compact", version: await version() },
      };
    }
    case "ping":
      return {};
    case "tools/list":
      return { tools: await mcpTools() };
    case "tools/call": {
      if (params === null || typeof params !== "object" || Array.isArray(params))
        throw new RpcError(INVALID_PARAMS, "params must be an object {name, arguments}");
      if (typeof params.name !== "string")
        throw new RpcError(INVALID_PARAMS, "params.name must be the name of a tool");
      const args = params.arguments ?? {};
      if (args === null || typeof args !== "object" || Array.isArray(args))
        throw new RpcError(INVALID_PARAMS, "params.arguments must be an object");
      try {
        return okResult(await toolCaller(opts)(params.name, args));
      } catch (e) {
        const err = asCoded(e);
        // Wrong arguments are the caller's mistake; anything else is the tool's answer.
        if (ARGUMENT_CODES.has(err.code))
          throw new RpcError(INVALID_PARAMS, err.message, { code: err.code });
        return errorResult(err);
      }
    }
    default:
      throw new RpcError(METHOD_NOT_FOUND, `method not found: ${JSON.stringify(req.method)}`);
  }
}

/**
 * The response to one request text (null for a notification). Exposed for tests and for hosts
 * that want the same answers without a process.
 */
export async function answer(text, opts = {}) {
  let req;
  try {
    req = JSON.parse(text);
  } catch (e) {
    return {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: PARSE_ERROR,
        message: `parse error: ${text.trim() ? e.message : "no input on stdin"}`,
      },
    };
  }
  const idOk = (v) =>
    v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
  const id = req !== null && typeof req === "object" && idOk(req.id) ? req.id : null;
  if (
    req === null ||
    typeof req !== "object" ||
    Array.isArray(req) ||
    req.jsonrpc !== "2.0" ||
    typeof req.method !== "string" ||
    ("id" in req && !idOk(req.id))
  ) {
    return {
      jsonrpc: "2.0",
      id,
      error: {
        code: INVALID_REQUEST,
        message:
          'invalid request: expected one object {"jsonrpc": "2.0", "id", "method", "params"}',
      },
    };
  }
  const notification = !("id" in req);
  let response;
  try {
    response = { jsonrpc: "2.0", id, result: await dispatch(req, opts) };
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    response = {
      jsonrpc: "2.0",
      id,
      error: { code: e.rpcCode, message: e.message, ...(e.data ? { data: e.data } : {}) },
    };
  }
  return notification ? null : response;
}

/** `rpc [--session ID] [--state-dir D]`: exit 0 with a result, 1 with a JSON-RPC error. */
export async function rpcCommand(opts, { stdin = process.stdin, stdout = process.stdout } = {}) {
  const text = await readStdin(stdin);
  const response = text === null ? tooLarge() : await answer(text, opts);
  if (!response) {
    console.error("smarter-compact rpc: a notification (a request without an id) gets no response");
    return 0;
  }
  await new Promise((resolve, reject) =>
    stdout.write(`${JSON.stringify(response)}\n`, (e) => (e ? reject(e) : resolve())),
  );
  return response.error ? 1 : 0;
}
