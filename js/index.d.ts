// Types of the public API of smarter-compact.

/** Wire formats `transform` accepts: OpenAI Chat Completions, Anthropic Messages, Pi's agent
 * messages, OpenCode's `{info, parts}` messages, OpenAI Responses `input` items. */
export type Format = "openai" | "anthropic" | "pi" | "opencode" | "responses";

/** Configuration a host may pass; environment variables and config.toml fill the rest. */
export interface Config {
  /** One threshold for every model (CONTEXT_TRIM_AT_TOKENS). */
  trimAtTokens?: number;
  /** The in-flight turn is trimmed to this fraction of the threshold (0.3). */
  trimToFraction?: number;
  /** Tool results above this many tokens are compressed (4000). */
  compressOverTokens?: number;
  /** Recall from a memory bank on trim (off). */
  compactionRecall?: boolean;
  /** Tools never compressed nor trimmed from the in-flight turn. */
  protectedTools?: string[];
}

/** What happened to one request. */
export interface Stats {
  before_tokens: number | null;
  after_tokens: number | null;
  /** A new cut was made on this request. */
  trimmed: boolean;
  /** Tool results compressed on this request. */
  compressed: number;
  /** The request went out unchanged because of an error. */
  fail_open: boolean;
  messages_before?: number;
  messages_after?: number;
  trim_at?: number;
  /** Over the threshold only by what the rules never remove. */
  over_limit?: boolean;
  /** The request starts with the previous rewritten request byte for byte. */
  prefix_reused?: boolean;
  cut?: number;
  removed_messages?: number;
  warnings?: string[];
  /** Set when fail_open is true. */
  error?: { code: string; message: string };
}

export interface TransformOptions {
  model?: string;
  format?: Format;
  /** Throw coded errors instead of passing the request through unchanged. */
  strict?: boolean;
  /** Tokens of the request outside the messages (system prompt, tool definitions). */
  overheadTokens?: number;
}

export interface Compactor {
  /** Rewrites one request; never throws unless `strict`. Kept messages are the caller's own objects,
   * edited ones new objects; `sources[k]` is the input index of output message k, in every format. */
  transform<M>(messages: M[], opts?: TransformOptions): Promise<{ messages: M[]; stats: Stats; sources: number[] }>;
  /** Makes the next `transform` trim, whatever the request's size. */
  compactNow(): Promise<void>;
  /** Thresholds, trims, fail-opens, usage. */
  status(): Promise<Record<string, unknown>>;
  /** Writes the store to its file now (sql.js otherwise writes a second after the last change), so
   * another process reading the file sees every message so far; false when the write failed. */
  flush(): boolean;
  close(): Promise<void>;
}

/** Creates the compactor of one session. Rejects with code E_BAD_ID for an unusable id. */
export function createCompactor(opts: {
  sessionId: string;
  stateDir?: string;
  config?: Config;
  /** A SQLite backend name ("bun:sqlite", "node:sqlite", "better-sqlite3", "sql.js") or a shim. */
  sqlite?: string | object;
  /** Used in the background only; `false` for none; default: the package's model when installed. */
  embedder?: Embedder | false;
  /** Open the existing store to read it only: nothing is created or written (E_NO_SESSION, E_STORE_WAL, E_READONLY). */ readonly?: boolean;
}): Promise<Compactor>;

/** The sentence embedder (all-MiniLM-L6-v2, 384 floats, unit length) in a worker thread. */
export interface Embedder {
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
  info: { dim: number; model: string; modelDir: string; loadMs: number };
}

/** Starts the embedder; rejects with E_NO_MODEL when the model or module is missing, E_EMBED when unloadable. */
export function createEmbedder(opts?: { modelDir?: string | URL }): Promise<Embedder>;

/** Version of the engine. */
export function version(): Promise<string>;

/** An `Error` named SmarterCompactError with a stable `code`. */
export function codedError(code: string, message: string, cause?: unknown): Error & { code: string };
