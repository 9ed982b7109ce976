// `smarter-compact mcp`: a stdio MCP server with the five tools, on @modelcontextprotocol/sdk.
// Nothing but protocol goes to stdout; a failing tool is a tool result with isError, never a
// crash of the server, and a bad or oversized line is answered with a JSON-RPC error
// (js/cli/mcp-transport.js), never the end of the session.
import { version } from "../index.js";
import { LineTransport } from "./mcp-transport.js";
import { errorResult, mcpTools, okResult, toolCaller } from "./tool-calls.js";

/** Starts the server on stdin/stdout; resolves when the client goes away. */
export async function mcpCommand({ stateDir, session }) {
  // Anything printed by accident would corrupt the protocol: console output goes to stderr.
  for (const m of ["log", "info", "debug"]) console[m] = (...a) => console.error(...a);
  const [{ Server }, { ListToolsRequestSchema, CallToolRequestSchema }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  const call = toolCaller({ stateDir, session });
  const tools = await mcpTools();
  const server = new Server(
    { name: "smarter-compact", version: await version() },
    {
      capabilities: { tools: {} },
      instructions:
        "smarter-compact keeps every message of a coding-agent session in a local store. smart_compact_search, smart_compact_sql and smart_compact_get read what was trimmed out of the context; context_status shows the session's state; compact_context scores a list of messages and keeps the most useful ones.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    try {
      return okResult(await call(req.params.name, req.params.arguments ?? {}));
    } catch (e) {
      return errorResult(e);
    }
  });
  server.onerror = (e) => console.error(`smarter-compact mcp: ${e?.message ?? e}`);
  const closed = new Promise((resolve) => {
    server.onclose = resolve;
    process.stdin.once("end", resolve);
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.connect(new LineTransport());
  await closed;
  await server.close().catch(() => {});
  return 0;
}
