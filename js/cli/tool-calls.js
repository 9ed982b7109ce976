// The five tools as the MCP server and `rpc` serve them: the same definitions and answers as
// in the hosts, plus an optional `session` argument on the tools that read a session's store.
import { resolveStateDir } from "../config.js";
import { asCoded, codedError } from "../errors.js";
import { runTool, toolDefinitions } from "../index.js";
import { defaultSession, withSession } from "./sessions.js";

/** Tools that read a session's store (the others need none). */
export const SESSION_TOOLS = new Set([
  "smart_compact_search",
  "smart_compact_sql",
  "smart_compact_get",
  "context_status",
]);

/** Codes that mean the caller's arguments were wrong (JSON-RPC -32602 in `rpc`). */
export const ARGUMENT_CODES = new Set(["E_ARG", "E_BAD_ID"]);

const SESSION_ARG = {
  type: "string",
  description:
    "Session id to read. Default: the server's session (--session, else SMARTER_COMPACT_SESSION, else the most recently active session of the state dir).",
};

/** The tools in MCP's shape: `{ name, description, inputSchema }`. */
export async function mcpTools() {
  return (await toolDefinitions()).map(({ name, description, parameters }) => ({
    name,
    description,
    inputSchema: SESSION_TOOLS.has(name)
      ? { ...parameters, properties: { ...parameters.properties, session: SESSION_ARG } }
      : parameters,
  }));
}

/**
 * A tool caller for a server: `call(name, args)` resolves to `{ text, structured }` (structured
 * is compact_context's `{messages, stats}`) or throws a coded Error. The session is resolved at
 * each call, so a server started before the first session sees it once it exists.
 */
export function toolCaller({ stateDir, session } = {}) {
  const dir = resolveStateDir(stateDir);
  const names = toolDefinitions().then((defs) => new Set(defs.map((d) => d.name)));
  return async function call(name, args = {}) {
    if (typeof name !== "string" || !(await names).has(name))
      throw codedError("E_ARG", `unknown tool ${JSON.stringify(name)}`);
    if (args === null || typeof args !== "object" || Array.isArray(args))
      throw codedError("E_ARG", "arguments must be an object");
    try {
      if (!SESSION_TOOLS.has(name)) {
        const text = await runTool(null, name, args);
        return { text, structured: name === "compact_context" ? JSON.parse(text) : undefined };
      }
      const { session: asked, ...rest } = args;
      if (asked !== undefined && typeof asked !== "string")
        throw codedError("E_ARG", "session must be a string");
      const id = await defaultSession(dir, asked || session);
      return { text: await withSession(dir, id, (c) => runTool(c, name, rest)) };
    } catch (e) {
      throw asCoded(e);
    }
  };
}

/** An MCP tool result for an error: the code first, so a model (and a test) can read it. */
export function errorResult(e) {
  const err = asCoded(e);
  return { content: [{ type: "text", text: `${err.code}: ${err.message}` }], isError: true };
}

/** An MCP tool result for an answer. */
export function okResult({ text, structured }) {
  return structured === undefined
    ? { content: [{ type: "text", text }] }
    : { content: [{ type: "text", text }], structuredContent: structured };
}
