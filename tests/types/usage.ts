// Every documented API of the package, called with the types it declares; `tsc --noEmit -p
// tsconfig.json` checks this file against the built package (npm/), and each `@ts-expect-error`
// line proves a wrong use is rejected. Only type-checked, never run.
import plugin, {
  codedError,
  compactContext,
  constants,
  createCompactor,
  createEmbedder,
  openSqlite,
  runTool,
  sessionPath,
  toolDefinitions,
  version,
  type CompactorStatus,
  type Constants,
  type EngineErrorCode,
  type ErrorCode,
  type Format,
  type Hit,
  type Page,
  type SqlResult,
  type Stats,
  type ToolName,
} from "smarter-compact";
import opencode from "smarter-compact/opencode";
import server from "smarter-compact/server";
import pi from "smarter-compact/pi";

type OpenAiMessage = { role: string; content: string | null; tool_call_id?: string };

const embedder = await createEmbedder({ modelDir: new URL("file:///models/") });
const dims: number = embedder.info.dim;
const vectors: Float32Array[] = await embedder.embed(["a text"]);

const c = await createCompactor({
  sessionId: "typed",
  stateDir: "/tmp/typed",
  sqlite: "sql.js",
  config: { trimAtTokens: 100_000, protectedTools: ["todowrite"], memoryBank: "team" },
  embedder,
});
await createCompactor({
  sessionId: "no-embedder",
  embedder: false,
  sqlite: await openSqlite({ path: "/tmp/x.db" }),
});

const messages: OpenAiMessage[] = [{ role: "user", content: "hello" }];
const res = await c.transform(messages, {
  model: "claude-sonnet-4",
  format: "anthropic",
  overheadTokens: 900,
});
const out: OpenAiMessage[] = res.messages; // the caller's own message type comes back
const sources: number[] = res.sources;
if (res.stats.fail_open) {
  const code: ErrorCode = res.stats.error.code;
  const nothing: null = res.stats.before_tokens;
  void [code, nothing];
} else {
  const stats: Stats = res.stats;
  const after: number = stats.after_tokens + stats.removed_messages;
  void [after, stats.warnings.join(), stats.prefix_reused];
}
await c.compactNow();

const found = await c.search("ValueError", { limit: 5, scope: "all", mode: "auto" });
const hit: Hit | undefined = found.hits[0];
const blob: string | null = hit?.blob_id ?? null;
const how: "fts" | "hybrid" = found.mode;
const pct: number = found.coverage.embedded / Math.max(1, found.coverage.chunks);

const got = await c.get(blob ?? 3, { start_line: 1, end_line: 200 });
const page: Page = got.page;
const next: string | null = page.next;

const sql: SqlResult = await c.sql("SELECT count(*) FROM messages", { timeoutMs: 2000 });
const firstCell: unknown = sql.rows[0]?.[0];
const more: boolean = sql.truncated;

const status: CompactorStatus = await c.status();
const backend: string | null = status.store.backend;
const trims: number | undefined = status.trims;
const lastTrim = status.last_trim?.removed_tokens;
const usage = status.usage?.before_tokens;
void [status.text, status.store.error?.code, status.fail_opens, status.stored?.writers];

const flushed: boolean = c.flush();
await c.settled();
const memory = await c.memoryContext();
const bank = memory.bank;
await c.close();

const path: string = sessionPath("/tmp/state", "typed");
const shim = await openSqlite({ path, backend: "better-sqlite3", readonly: true });
const rows: unknown[][] = shim.query("SELECT 1", []);
shim.exec("PRAGMA user_version = 1", [1, "a", null, new Uint8Array(1)]);
const it = shim.iterate("SELECT 1");
for (const row of it.rows) void row;
shim.close();

const tools = await toolDefinitions();
const names: ToolName[] = tools.map((t) => t.name);
const answer: string = await runTool(c, "smart_compact_search", { query: "x" });
const scored: string = await runTool(null, "compact_context", {
  messages: [{ role: "user", content: "x" }],
});

const cc = await compactContext(
  { messages, query: "the next task", target_ratio: 0.4, distill_novel: true },
  { embedder: null, bank, source: "typed" },
);
const keptMessages: OpenAiMessage[] = cc.messages;
const dropped: number = cc.stats.dropped + cc.stats.dropped_pct;
const distilled: number | undefined = cc.stats.distilled;

const v: string = await version();
const k: Constants = await constants();
const formats: Format[] = k.formats;
const codes: EngineErrorCode[] = k.errorCodes;
const limits: number = k.maxSearchHits + k.maxSqlRows + k.pageLines + k.vectorDim + k.maxIdLen;

const err = codedError("E_STORE", "the store is gone", new Error("cause"));
const errCode: "E_STORE" = err.code;
const asError: Error = err;

const hooks = await plugin.server(
  {},
  { stateDir: "/tmp/state", trimAtTokens: 50_000, sqlite: "bun:sqlite" },
);
await hooks["experimental.chat.messages.transform"]({}, { messages: [] });
await hooks["experimental.chat.system.transform"]({ sessionID: "s" }, { system: ["prompt"] });
await hooks["command.execute.before"]({ command: "smarter-compact:compact", sessionID: "s" });
await hooks.config({});
const toolText: string = await hooks.tool.context_status.execute({}, { sessionID: "s" });
const sameServer: typeof opencode = server;
const pluginId: "smarter-compact" = opencode.id;

await pi(
  {
    registerTool: (tool) => void tool.name,
    registerCommand: (name, command) => void [name, command.description],
    on: (event, handler) => void [event, handler],
  },
  { compactionRecall: true },
);

// Wrong uses the declarations reject:
// @ts-expect-error format is one of the five wire formats
await c.transform(messages, { format: "gemini" });
// @ts-expect-error a session id is required
await createCompactor({ stateDir: "/tmp" });
// @ts-expect-error scope is "trimmed" or "all"
await c.search("x", { scope: "everything" });
// @ts-expect-error the stats of a request that was not rewritten have no numbers
const notANumber: number = res.stats.before_tokens;
// @ts-expect-error unknown tool names are refused
await runTool(c, "smart_compact_delete", {});
// @ts-expect-error only compact_context runs without a session
await runTool(null, "smart_compact_sql", { sql: "SELECT 1" });
// @ts-expect-error a search hit's line is a number or null
const line: string = hit!.line;
// @ts-expect-error flush() is synchronous
await c.flush().then(() => {});
// @ts-expect-error openSqlite needs a path
await openSqlite({ backend: "sql.js" });
// @ts-expect-error not a SQLite backend
await openSqlite({ path, backend: "postgres" });
// @ts-expect-error the config keys are camelCase
await createCompactor({ sessionId: "s", config: { trim_at_tokens: 1 } });

export const used = [
  sources,
  dims,
  vectors,
  out,
  blob,
  how,
  pct,
  next,
  firstCell,
  more,
  backend,
  trims,
  lastTrim,
  usage,
];
export const alsoUsed = [
  flushed,
  rows,
  names,
  answer,
  scored,
  keptMessages,
  dropped,
  distilled,
  v,
  formats,
  codes,
];
export const andUsed = [limits, errCode, asError, toolText, sameServer, pluginId, notANumber, line];
