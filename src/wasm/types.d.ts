// The engine's values as JavaScript sees them, declared once: wasm-bindgen copies this text into
// pkg/smarter_compact.d.ts (src/wasm/convert.rs), js/index.d.ts re-exports it, and
// tests/ts_types.rs checks every interface against what the Rust core serialises.

/** Wire formats the engine reads and edits (`constants().formats`). */
export type Format = "openai" | "anthropic" | "responses" | "opencode" | "pi";

/** Codes of the engine's errors (`constants().errorCodes`). */
export type EngineErrorCode =
  | "E_JSON"
  | "E_MALFORMED"
  | "E_ORPHAN_RESULT"
  | "E_FORMAT"
  | "E_BAD_ID"
  | "E_ARG"
  | "E_NOT_FOUND"
  | "E_SQL_REFUSED"
  | "E_SQL"
  | "E_STORE"
  | "E_READONLY"
  | "E_NO_SESSION"
  | "E_EMBED";

/** Environment variables the engine reads when the host passes them (`constants().envKeys`). */
export type EnvKey =
  | "CONTEXT_TRIM_AT_TOKENS"
  | "CONTEXT_TRIM_AT_FRACTION"
  | "CONTEXT_TRIM_TO_FRACTION"
  | "CONTEXT_COMPRESS_OVER_TOKENS"
  | "CONTEXT_COMPACTION_RECALL"
  | "CONTEXT_MEMORY_BANK"
  | "CONTEXT_NOTIFY"
  | "CONTEXT_SUBAGENTS"
  | "CONTEXT_DIGEST_FRACTION"
  | "CONTEXT_DIGEST_PARTS"
  | "CONTEXT_SUPERSEDE";

/** The contracts shared with JavaScript, read from the core. */
export interface Constants {
  version: string;
  formats: Format[];
  errorCodes: EngineErrorCode[];
  envKeys: EnvKey[];
  /** Floats per embedding vector. */
  vectorDim: number;
  /** Most hits one search returns. */
  maxSearchHits: number;
  /** Most rows the SQL tool returns. */
  maxSqlRows: number;
  /** Longest session or blob id. */
  maxIdLen: number;
  /** Most lines on one page of `get`. */
  pageLines: number;
}

/** What configures an engine; `config` takes camelCase or snake_case keys. */
export interface EngineOptions {
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** The user's config.toml text. */
  toml?: string | null;
  /** The project's .smarter-compact.toml text, over the user's file. */
  projectToml?: string | null;
}

/** How the host describes one request. */
export interface RequestOptions {
  format?: string;
  model?: string;
  overheadTokens?: number;
  /** The model's context window in tokens (0 or absent: not known). */
  contextWindow?: number;
  /** Tokens the host keeps free below the window (0 or absent: none). */
  reserveTokens?: number;
  /** The prompt cache's lifetime the request asked for, in ms (0 or absent: the configured one). */
  cacheTtlMs?: number;
  /** Host clock, ms since the epoch (0 or absent: unknown; then never cache-cold). */
  nowMs?: number;
}

/** The configuration an engine runs with (defaults, config.toml, environment, host options). */
export interface EngineConfig {
  /** One threshold for every model (CONTEXT_TRIM_AT_TOKENS), overriding the table. */
  trim_at_override: number | null;
  /** Per-model thresholds: [pattern, tokens or a share of the window like "60%"]. */
  trim_at_table: [string, number | string][];
  /** A built-in threshold is capped at this fraction of the model's context window. */
  trim_at_fraction: number;
  /** Context windows by model pattern, for hosts that do not tell it: [pattern, tokens]. */
  window_table: [string, number][];
  /** The in-flight turn is trimmed to this fraction of the threshold. */
  trim_to_fraction: number;
  /** Tool results above this many tokens are compressed. */
  compress_over_tokens: number;
  /** Recall from a memory bank on trim. */
  compaction_recall: boolean;
  /** Tell the user in the host's UI about each new cut. */
  notify: boolean;
  /** Subagent sessions are trimmed too (false leaves them alone). */
  subagents: boolean;
  /** The prompt cache's lifetime in seconds by model pattern (0: never cache-cold). */
  cache_ttl_table: [string, number][];
  /** Tool exchanges of the in-flight turn that always stay. */
  keep_last_exchanges: number;
  /** A trim must free at least this fraction of the threshold. */
  min_free_fraction: number;
  /** Tools never compressed nor trimmed out of the in-flight turn. */
  protected_tools: string[];
  /** Name of the memory bank in use. */
  memory_bank: string | null;
  /** The digest after the pointer may take this fraction of the threshold (0: no digest). */
  digest_fraction: number;
  /** What the digest holds. */
  digest_parts: DigestParts;
  /** When a cut is made, kept tool results a later kept one supersedes (same call and output,
   * a file read again) are sent as a reference to it. */
  supersede: boolean;
  /** Invalid configuration values (defaults used). */
  warnings: string[];
  /** Where each value that is not built in came from (`trim_to_fraction`, `trim_at.<pattern>`,
   * `context_window.<pattern>` → `config.toml`, `.smarter-compact.toml`, the variable's name or
   * `option <name>`). */
  origins: Record<string, string>;
}

/** What happened to one request, as the engine reports it. */
export interface Stats {
  /** Estimated tokens as received. */
  before_tokens: number;
  /** Estimated tokens as sent. */
  after_tokens: number;
  /** A new cut was made on this request. */
  trimmed: boolean;
  /** Tool results (or runaway assistant texts) compressed on this request. */
  compressed: number;
  /** Always false from the engine: a request that went out unchanged has the host's
   * fail-open stats instead (js/index.d.ts). */
  fail_open: false;
  messages_before: number;
  messages_after: number;
  /** Threshold in force for this model. */
  trim_at: number;
  /** The model's context window the threshold was taken from (0: not known). */
  context_window: number;
  /** Over the threshold only by what the rules never remove. */
  over_limit: boolean;
  /** The request starts with the previous rewritten request byte for byte. */
  prefix_reused: boolean;
  /** Number of the cut in force (0: none). */
  cut: number;
  /** Messages the cut in force keeps out of the request. */
  removed_messages: number;
  /** Estimated tokens of the digest after the pointer of the cut in force (0: none). */
  digest_tokens: number;
  /** Kept messages the cut in force sends with a tool result superseded by a later one. */
  superseded_messages: number;
  /** Estimated tokens supersession saves under the cut in force. */
  superseded_tokens: number;
  /** The new cut was made early because the prompt cache had expired (no cache hit lost). */
  cache_cold: boolean;
  /** Configuration values that were invalid and replaced by defaults. */
  warnings: string[];
  /** A restore this request made. */
  restored: Restored | null;
  /** One line for the user when this request made a new cut or a restore and `notify` is on. */
  notice: string | null;
}

/** A restore made by a request: the cuts lifted, what came back, the one-time cache write. */
export interface Restored {
  /** The cuts lifted, newest first. */
  cuts: number[];
  /** Messages back in the request. */
  messages: number;
  /** Estimated tokens this request writes to the prompt cache once. */
  cache_write_tokens: number;
  /** Automatic trims wait until the request reaches this many estimated tokens. */
  hold_below: number;
}

/** What asking for a restore will do (`requestRestore`), estimated from the last request. */
export interface RestorePlan {
  /** Restores now asked for; each lifts one more cut on the next request. */
  pending: number;
  /** The cut the next request lifts, or null when no cut is in force (nothing was asked). */
  cut: number | null;
  /** Messages that come back into the request. */
  messages: number;
  /** Estimated tokens the next request writes to the prompt cache once. */
  cache_write_tokens: number;
}

/** Which parts the digest after the pointer holds. */
export interface DigestParts {
  /** Earlier real user turns. */
  users: boolean;
  /** The table of contents of trimmed tool calls. */
  toc: boolean;
  /** Files touched. */
  files: boolean;
  /** The latest todo list. */
  todo: boolean;
  /** Names (paths, identifiers) the trimmed messages used that nothing kept shows. */
  names: boolean;
}

/** The last trim of a session. */
export interface LastTrim {
  seq: number;
  removed_messages: number;
  removed_tokens: number;
  /** Asked for by the user. */
  manual: boolean;
  /** Made early, when the prompt cache had expired. */
  cache_cold: boolean;
  /** Lifted by a restore. */
  lifted: boolean;
  /** Kept messages it sends with a tool result superseded by a later one. */
  superseded_messages: number;
  /** Estimated tokens supersession saves under it. */
  superseded_tokens: number;
}

/** Totals over the recorded requests of a session. */
export interface Usage {
  requests: number;
  before_tokens: number;
  after_tokens: number;
  prefix_reused: number;
  compressed: number;
  over_limit: number;
  fail_opens: number;
}

/** What a session store holds. */
export interface StoreCounts {
  messages: number;
  /** Messages still in the model's context. */
  in_context: number;
  /** Full texts of compressed outputs. */
  blobs: number;
  /** Engine versions that wrote the stored messages: [version, rows]. */
  writers: [string, number][];
}

/** The state of a session, for `context_status`. */
export interface Status {
  version: string;
  trim_at_override: number | null;
  trim_at_table: [string, number | string][];
  trim_at_fraction: number;
  trim_to_fraction: number;
  compress_over_tokens: number;
  compaction_recall: boolean;
  protected_tools: string[];
  memory_bank: string | null;
  warnings: string[];
  /** Messages stored. */
  messages: number;
  /** Trims made. */
  trims: number;
  /** Trims made early because the prompt cache had expired. */
  cache_cold_trims: number;
  /** Trims lifted by a restore. */
  lifted_trims: number;
  last_trim: LastTrim | null;
  /** A manual trim is waiting for the next request. */
  manual_pending: boolean;
  /** Restores asked for and not yet made. */
  restores_pending: number;
  /** After a restore, automatic trims wait until the request reaches this many tokens. */
  hold_below: number | null;
  usage: Usage;
  /** Fail-opens, including those the store could not record. */
  fail_opens: number;
  /** What the store holds (null when it cannot be read). */
  stored: StoreCounts | null;
  /** Trim regret over the session. */
  regret: Regret;
}

/** Trim regret: what the agent had to do because a cut took something out of its view. */
export interface Regret {
  /** Results of the recall tools received while a cut was in force. */
  recalls: number;
  /** Tool calls made again (same tool and arguments) while a cut that removed the first was in force. */
  repeats: number;
}

/** One search hit. */
export interface Hit {
  /** Message number. */
  seq: number;
  role: string;
  /** Tool name for tool calls and outputs. */
  tool_name: string | null;
  /** The matching text (a line of a tool output, or a window of a message). */
  snippet: string;
  /** The blob holding the full output, when the output was compressed. */
  blob_id: string | null;
  /** 1-based line number inside the tool output. */
  line: number | null;
  /** The message is still in the model's context. */
  in_context: boolean;
  /** Score (higher is better). */
  score: number;
}

/** How many stored chunks have embedding vectors. */
export interface Coverage {
  embedded: number;
  chunks: number;
}

/** `smart_compact_search`: the hits, how they were ranked, and the text for the model. */
export interface SearchResult {
  /** Best first. */
  hits: Hit[];
  mode: "fts" | "hybrid";
  coverage: Coverage;
  /** Why embeddings were not used when they could have been (e.g. the embedder was busy with
   * the background backlog, or nothing is embedded yet); null for hybrid or without an embedder. */
  reason: string | null;
  text: string;
}

/** One page of a compressed output or a stored message. */
export interface Page {
  /** The id asked for. */
  id: string;
  /** First line shown (1-based). */
  start_line: number;
  /** Last line shown. */
  end_line: number;
  /** Lines in the full text. */
  total_lines: number;
  /** The lines, cut to the page budget. */
  text: string;
  /** The call for the next page, if any. */
  next: string | null;
  /** The text the lines were filtered on, when a grep. */
  grep: string | null;
  /** Lines of `start_line`–`end_line` that match the grep (all of them, not only this page's). */
  matches: number | null;
}

/** `smart_compact_get`: the page and the text for the model. */
export interface GetResult {
  page: Page;
  text: string;
}

/** A read-only query's result as the SQL runner returns it. */
export interface SqlRows {
  columns: string[];
  /** Each row's values in column order (blobs as `<blob n bytes>`). */
  rows: unknown[][];
  /** More rows existed than were returned. */
  truncated: boolean;
}

/** A chunk of stored text waiting for its embedding vector. */
export interface PendingVector {
  /** Content hash of the chunk. */
  hash: string;
  text: string;
}

/** The statistics of a `compact_context` call. */
export interface CompactStats {
  before_tokens: number;
  after_tokens: number;
  /** Messages dropped. */
  dropped: number;
  /** Tokens dropped, in percent of `before_tokens`. */
  dropped_pct: number;
  /** Similarity and coverage came from embeddings. */
  embedding: boolean;
}

/** Which messages `compact_context` keeps (indices, ascending), with its statistics. */
export interface CompactContextResult {
  kept: number[];
  stats: CompactStats;
}

/** Per-message signals for `compactContext`: similarity to the query, coverage by memories. */
export interface Signals {
  similarity?: number[] | null;
  coverage?: number[] | null;
}

/** A SQLite value as the engine passes it to the host. */
export type SqlParam = null | number | string | Uint8Array;

/** A synchronous SQLite connection provided by the host. */
export interface SqliteHost {
  /** Runs one statement that returns no rows. */
  exec(sql: string, params: SqlParam[]): void;
  /** Runs one query; each row is an array of its values in column order. */
  query(sql: string, params: SqlParam[]): unknown[][];
}
