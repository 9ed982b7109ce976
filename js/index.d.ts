// Types of the public API of smarter-compact. The engine's values (stats, status, hits, pages,
// SQL rows, constants, error codes) are declared once, in the engine (src/wasm/types.d.ts, built
// into pkg/smarter_compact.d.ts), and re-exported here; this file adds what the JS side makes.

import type {
  CompactStats,
  Constants,
  EngineErrorCode,
  Format,
  GetResult,
  MemoryBank,
  RestorePlan,
  SearchResult,
  SqliteHost,
  SqlRows,
  Stats,
  Status,
} from "../pkg/smarter_compact.js";

export type {
  CompactContextResult,
  CompactStats,
  Constants,
  Coverage,
  EngineConfig,
  EngineErrorCode,
  EnvKey,
  Format,
  GetResult,
  Hit,
  LastTrim,
  MemoryBank,
  Page,
  PendingVector,
  Restored,
  RestorePlan,
  SearchResult,
  SqliteHost,
  SqlParam,
  SqlRows,
  Stats,
  Status,
  StoreCounts,
  Usage,
} from "../pkg/smarter_compact.js";

/** Codes the JS side adds: an unexpected failure, a wasm panic, a missing embedding model. */
export type HostErrorCode = "E_INTERNAL" | "E_PANIC" | "E_NO_MODEL" | "E_STORE_WAL";

/** Every code an error of the API can carry. */
export type ErrorCode = EngineErrorCode | HostErrorCode;

/** An `Error` named SmarterCompactError with a stable `code`. */
export interface SmarterCompactError<C extends string = ErrorCode> extends Error {
  name: "SmarterCompactError";
  code: C;
}

/** Configuration a host may pass (camelCase); environment variables and config.toml fill the rest. */
export interface Config {
  /** One threshold for every model (CONTEXT_TRIM_AT_TOKENS). */
  trimAtTokens?: number;
  /** Built-in thresholds are capped at this share of the model's window less the host's
   * reserve (0.6; also "60%"). */
  trimAtFraction?: number | string;
  /** The in-flight turn is trimmed to this fraction of the threshold (0.3). */
  trimToFraction?: number;
  /** Tool results above this many tokens are compressed (4000). */
  compressOverTokens?: number;
  /** Recall from a memory bank on trim (off). */
  compactionRecall?: boolean;
  /** One notice in the host's UI on each new cut (on; CONTEXT_NOTIFY=0 turns it off). */
  notify?: boolean;
  /** Tools never compressed nor trimmed from the in-flight turn. */
  protectedTools?: string[];
  /** Name of the memory bank (`<state dir>/context/banks/<name>.db`). */
  memoryBank?: string;
}

/** The SQLite backends, in the order they are tried. */
export type BackendName = "bun:sqlite" | "node:sqlite" | "better-sqlite3" | "sql.js";

/** A connection a host passes instead of a backend name; `kind` and `path` enable the SQL tool. */
export interface HostSqlite extends SqliteHost {
  kind?: BackendName;
  path?: string;
  /** Writes pending changes to the file (backends that keep the database in memory). */
  flush?(): void;
  close?(): void;
}

/** A connection opened by `openSqlite`. */
export interface SqliteShim extends SqliteHost {
  kind: BackendName;
  path: string;
  /** Runs a read-only query, streaming its rows. */
  iterate(sql: string): { columns: string[]; rows: Iterable<unknown[]> };
  close(): void;
  /** sql.js only: writes the in-memory database to its file now. */
  flush?(): void;
  /** sql.js only: milliseconds the last write to the file took. */
  lastExportMs?: number;
}

/** Opens a SQLite database file with the first backend that loads (or `backend`); rejects with
 * E_ARG for an unknown backend name, E_STORE when the database cannot be opened. */
export function openSqlite(opts: {
  path: string;
  backend?: BackendName;
  readonly?: boolean;
}): Promise<SqliteShim>;

/** Path of a session's database under a state directory. */
export function sessionPath(stateDir: string, sessionId: string): string;

export interface TransformOptions {
  model?: string;
  format?: Format;
  /** Throw coded errors instead of passing the request through unchanged. */
  strict?: boolean;
  /** Tokens of the request outside the messages (system prompt, tool definitions). */
  overheadTokens?: number;
  /** The model's context window in tokens, when the host knows it: built-in thresholds are
   * capped at `trim_at_fraction` of it and `"60%"` thresholds are taken of it. */
  contextWindow?: number;
  /** Tokens the host keeps free below the window (its own compaction fires above
   * window − reserve); the built-in thresholds stay at `trim_at_fraction` of what is left. */
  reserveTokens?: number;
  /** The prompt cache's lifetime this request asked for, in ms (e.g. an hour for Anthropic's
   * long TTL); absent: the configured lifetime for the model (`[context_proxy.cache_ttl]`). */
  cacheTtlMs?: number;
  /** The time of this request, ms since the epoch, for cache-cold cuts (the gap since the
   * session's previous request); absent: `Date.now()`. For replays and simulated clocks. */
  nowMs?: number;
}

/** The stats of a request that went out unchanged because of an error. */
export interface FailOpenStats {
  before_tokens: null;
  after_tokens: null;
  trimmed: false;
  compressed: 0;
  fail_open: true;
  error: { code: ErrorCode; message: string };
}

/** A rewritten request: kept messages are the caller's own objects, edited ones new objects;
 * `sources[k]` is the input index of output message k. A fail-open returns the caller's array
 * itself (`sources` then maps each message to itself). */
export interface TransformResult<M> {
  messages: M[];
  /** `stats.fail_open` tells which. */
  stats: Stats | FailOpenStats;
  sources: number[];
}

/** Why the session store is unavailable. */
export interface StoreError {
  code: ErrorCode;
  message: string;
  /** ISO time of the failure. */
  at: string;
}

/** `context_status`: the engine's status (absent while the store cannot be opened), the store,
 * and the text the tool shows. */
export type CompactorStatus = Partial<Status> & {
  session_id: string;
  store: { path: string; backend: BackendName | null; ok: boolean; error: StoreError | null };
  fail_opens: number;
  /** The threshold in force on this process's latest rewritten request (null before the first):
   * the model, its threshold and the context window it was taken from (0: not known). */
  last_request: { model: string; trim_at: number; context_window: number } | null;
  text: string;
};

export type SearchScope = "trimmed" | "all";
export type SearchMode = "auto" | "fts" | "hybrid";

export interface SearchOptions {
  /** Most hits (8; at most `constants().maxSearchHits`). */
  limit?: number;
  /** `trimmed`: what is not in the model's context (default); `all`: the whole session. */
  scope?: SearchScope;
  /** `auto`: hybrid once embeddings exist and the embedder is free (full-text, with the reason,
   * while it computes the background backlog); `fts`: full-text; `hybrid`: embeds the backlog first. */
  mode?: SearchMode;
}

/** The answer of the SQL tool: the rows and the text for the model. */
export type SqlResult = SqlRows & { text: string };

/** What `compactContext` uses from a session. */
export interface MemoryContext {
  embedder: Embedder | null;
  bank: MemoryBank | null;
  source: string;
}

export interface Compactor {
  /** Rewrites one request; never throws unless `strict`. */
  transform<M>(messages: M[], opts?: TransformOptions): Promise<TransformResult<M>>;
  /** Makes the next `transform` trim, whatever the request's size. */
  compactNow(): Promise<void>;
  /** Asks the next `transform` (in whichever process serves the session) to lift the latest
   * cut; `cut` is null when no cut is in force. */
  restore(): Promise<RestorePlan>;
  /** `smart_compact_search`: ranked hits; rejects with E_ARG for a bad query or option, E_NO_MODEL
   * for `mode: "hybrid"` without the model. */
  search(query: string, opts?: SearchOptions): Promise<SearchResult>;
  /** `smart_compact_get`: a page of a compressed output (by blob id) or of a message (by number). */
  get(
    id: string | number,
    opts?: { start_line?: number; end_line?: number; grep?: string },
  ): Promise<GetResult>;
  /** `smart_compact_sql`: one read-only query (at most 200 rows, stopped after `timeoutMs`). */
  sql(statement: string, opts?: { timeoutMs?: number }): Promise<SqlResult>;
  /** `context_status`: thresholds, store, trims, fail-opens, usage. */
  status(): Promise<CompactorStatus>;
  /** Writes the store to its file now (sql.js otherwise writes a second after the last change), so
   * another process reading the file sees every message so far; false when the write failed. */
  flush(): boolean;
  /** Waits until the background embedding round, if any, is done. */
  settled(): Promise<void>;
  /** Messages serialised so far by requests in the openai and anthropic formats, which go by
   * message id: a message object passed again unchanged is not serialised again. */
  readonly serialisedMessages: number;
  /** The embedder, the memory bank and the source name `compactContext` uses for this session. */
  memoryContext(): Promise<MemoryContext>;
  /** Flushes and releases the store and the bank. */
  close(): Promise<void>;
}

/** Creates the compactor of one session. Rejects with code E_BAD_ID for an unusable id. */
export function createCompactor(opts: {
  sessionId: string;
  stateDir?: string;
  config?: Config;
  /** A SQLite backend name or a connection; by default the best backend of the runtime. */
  sqlite?: BackendName | HostSqlite;
  /** Used in the background only; `false` for none; default: the package's model when installed. */
  embedder?: Embedder | false;
  /** Open the existing store to read it only: nothing is created or written (E_NO_SESSION, E_STORE_WAL, E_READONLY). */ readonly?: boolean;
  /** Where the project's `.smarter-compact.toml` is looked for (this folder, then up to the
   * repository's root); none by default. */
  projectDir?: string | null;
}): Promise<Compactor>;

/** Which texts the embedder serves first: a search's query, ordinary calls, the background backlog
 * (last, and not while a host request is in flight). */
export type EmbedPriority = "query" | "normal" | "background";

/** The sentence embedder (all-MiniLM-L6-v2, 384 floats, unit length) in one worker thread. */
export interface Embedder {
  /** One vector per text, in order. */
  embed(texts: string[], opts?: { priority?: EmbedPriority }): Promise<Float32Array[]>;
  /** Whether the worker is computing now (a new call waits for that chunk). */
  readonly busy?: boolean;
  /** The worker's wasm linear memory in bytes (as of its latest call) and its OS thread id and
   * nice value (null where the OS does not tell). */
  readonly worker?: { wasmBytes: number; tid: number | null; nice: number | null };
  /** A host request is in flight: background texts wait until the returned function is called. */
  beginRequest?(): () => void;
  /** Ends the worker thread; pending requests reject with E_EMBED. */
  close(): Promise<void>;
  info: { dim: number; model: string; modelDir: string; loadMs: number };
}

/** Starts the embedder; rejects with E_NO_MODEL when the embedder package (smarter-compact-embed,
 * found beside this one, or at `embedDir` / $SMARTER_COMPACT_EMBED_DIR) or the model is missing,
 * E_EMBED when unloadable. `modelDir` (or $SMARTER_COMPACT_MODEL_DIR) replaces the package's
 * model folder. */
export function createEmbedder(opts?: {
  modelDir?: string | URL;
  embedDir?: string;
}): Promise<Embedder>;

/** A conversation turn `compactContext` scores. */
export interface ContextMessage {
  role: string;
  content?: unknown;
}

export interface CompactContextArgs<M extends ContextMessage = ContextMessage> {
  messages: M[];
  /** The upcoming task; biases the scoring towards what is needed next. */
  query?: string;
  /** Fraction of the tokens to keep, 0.05–1.0 (0.4). */
  target_ratio?: number;
  /** Record capped excerpts of novel dropped turns in the memory bank. */
  distill_novel?: boolean;
}

/** `compact_context`'s statistics; `distilled` and `distill_note` with `distill_novel`. */
export type CompactContextStats = CompactStats & { distilled?: number; distill_note?: string };

/** Keeps the best-scoring messages up to `target_ratio` of the tokens, verbatim and in order.
 * `opts.embedder`: `undefined` for the package's model when installed, `null` for none. */
export function compactContext<M extends ContextMessage>(
  args: CompactContextArgs<M>,
  opts?: { embedder?: Embedder | null; bank?: MemoryBank | null; source?: string },
): Promise<{ messages: M[]; stats: CompactContextStats }>;

/** The names of the tools. */
export type ToolName =
  | "smart_compact_search"
  | "smart_compact_sql"
  | "smart_compact_get"
  | "compact_context"
  | "context_status";

/** A tool for a model: name, description, JSON-schema parameters. */
export interface ToolDefinition {
  name: ToolName;
  description: string;
  parameters: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  };
}

/** The five tools, with the same names, schemas and answers in every host. */
export function toolDefinitions(): Promise<ToolDefinition[]>;

/** Runs a tool for a model and returns the text of its answer; rejects with a coded error for
 * bad arguments or a failed query. `compact_context` needs no session. */
export function runTool(
  compactor: Compactor,
  name: ToolName,
  args?: Record<string, unknown>,
): Promise<string>;
export function runTool(
  compactor: null | undefined,
  name: "compact_context",
  args: CompactContextArgs,
): Promise<string>;

/** Version of the engine. */
export function version(): Promise<string>;

/** The engine's contracts: formats, error codes, environment keys, limits. */
export function constants(): Promise<Constants>;

/** Builds an `Error` named SmarterCompactError with a stable `code`. */
export function codedError<C extends string>(
  code: C,
  message: string,
  cause?: unknown,
): SmarterCompactError<C>;

/** Options of the OpenCode plugin and the Pi extension: the configuration keys, plus where the
 * stores live and which SQLite backend they use. */
export interface HostOptions extends Config {
  stateDir?: string;
  /** Where the project's `.smarter-compact.toml` is looked for (default: the host's directory). */
  projectDir?: string;
  sqlite?: BackendName | HostSqlite;
}

export { default } from "./hosts/opencode.js";
