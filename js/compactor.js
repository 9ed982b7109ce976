// The compactor of one session: the engine over the session's store, with fail-open requests,
// the search tools and the background embedding.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { resolveStateDir, engineOptions } from "./config.js";
import { asCoded, codedError, isTrap } from "./errors.js";
import { MessageIds } from "./message-ids.js";
import { applyRewrite } from "./rewrite.js";
import { openSqlite } from "./shims/index.js";
import { runReadonlySql, SQL_TIMEOUT_MS } from "./sql.js";
import { embedBacklog, openBank, sharedEmbedder } from "./memory.js";
import { statusText } from "./status.js";
import { engineModule, discardInstance } from "./wasm.js";

const SCOPES = new Set(["trimmed", "all"]);
/** Formats whose requests go by message id (the engine reads their messages as they are). */
/** The formats whose requests go by message id, each with the host's own key of a message
 * (for hosts that pass new objects for unchanged messages: OpenCode reads them back from its
 * database, Pi hands the hook a deep copy). */
const BY_ID = new Map([
  ["openai", undefined],
  ["anthropic", undefined],
  ["opencode", (m) => m.info?.id],
  [
    "pi",
    (m) =>
      typeof m.timestamp === "number"
        ? `${m.role}\u0000${m.timestamp}\u0000${m.toolCallId ?? ""}`
        : undefined,
  ],
]);
const MODES = new Set(["auto", "fts", "hybrid"]);
/** Why an "auto" search used full-text only while the embedder was computing. */
const BUSY_REASON = "the embedder is busy with the background backlog";

/** Path of a session's database under a state directory. */
export function sessionPath(stateDir, sessionId) {
  return join(stateDir, "context", "sessions", `${sessionId}.db`);
}

/**
 * A compactor for one session. `transform` never throws unless `strict` is set: on any error
 * (a malformed request, a broken store, a trapped engine) the request goes out unchanged and
 * `stats.fail_open` is true; the next request tries again. A read-only compactor only reads an
 * existing store: it never creates, migrates or writes it (its `transform` fails E_READONLY).
 */
class Compactor {
  #sessionId;
  #path;
  #options;
  #sqlite;
  #shim = null;
  #glue = null;
  #engine = null;
  #failOpens = 0;
  /** The threshold in force on the latest rewritten request: { model, trim_at, context_window }. */
  #lastRequest = null;
  #storeError = null;
  #stateDir;
  #embedderOption;
  #bank = null;
  #bankShim = null;
  #embedding = null;
  /** The embedder once resolved (null: none), told when a request is in flight. */
  #embedderNow = null;
  #readonly;
  /** The message ids of the current engine's cached requests. */
  #ids = null;

  constructor(sessionId, stateDir, options, sqlite, embedder, readonly) {
    this.#sessionId = sessionId;
    this.#stateDir = stateDir;
    this.#path = sessionPath(stateDir, sessionId);
    this.#options = options;
    this.#sqlite = sqlite;
    this.#embedderOption = embedder;
    this.#readonly = readonly;
  }

  /** The embedder to use: the caller's, none (false), or the process-wide one if a model exists. */
  async #embedder() {
    if (this.#embedderOption === false) return null;
    this.#embedderNow = (await (this.#embedderOption ?? sharedEmbedder())) ?? null;
    return this.#embedderNow;
  }

  /** Opens the configured memory bank and gives it to the engine for recall on trim. */
  async #attachBank(engine) {
    const name = engine.config().memory_bank;
    if (!name || this.#bank) return;
    try {
      const { bank, shim } = await openBank(this.#stateDir, name);
      engine.attachBank(shim);
      this.#bank = bank;
      this.#bankShim = shim;
    } catch {
      // a bank that cannot be opened only means no recall and no episodes; requests go on
    }
  }

  /** Embeds, in the background, what the store and the bank are waiting for. */
  #kickEmbedding() {
    if (this.#embedding) return;
    this.#embedding = (async () => {
      const embedder = await this.#embedder();
      if (embedder)
        await embedBacklog(embedder, () =>
          this.#engine ? { engine: this.#engine, bank: this.#bank } : null,
        );
    })()
      .catch(() => {}) // best effort: the next request starts another round
      .finally(() => {
        this.#embedding = null;
      });
  }

  /** Waits until the background embedding round (if any) is done. */
  async settled() {
    while (this.#embedding) await this.#embedding;
  }

  /** The engine, opening the store and the module if needed. */
  async #live() {
    if (this.#engine) return this.#engine;
    this.#glue ??= await engineModule();
    this.#glue.validateId(this.#sessionId);
    try {
      this.#shim ??= await this.#openShim();
      if (this.#readonly) {
        // No bank either: recall and episodes belong to requests, which a reader never makes.
        this.#engine = this.#glue.Engine.openReadonly(this.#sessionId, this.#options, this.#shim);
      } else {
        this.#engine = new this.#glue.Engine(this.#sessionId, this.#options, this.#shim);
        await this.#attachBank(this.#engine);
      }
    } catch (e) {
      this.#closeShim();
      throw e.code ? e : codedError("E_STORE", `cannot open the session store: ${e.message}`, e);
    }
    return this.#engine;
  }

  async #openShim() {
    const s = this.#sqlite;
    if (s && typeof s === "object") return s;
    const backend = typeof s === "string" ? s : undefined;
    if (this.#readonly) return openSqlite({ path: this.#path, backend, readonly: true });
    try {
      mkdirSync(dirname(this.#path), { recursive: true });
    } catch (e) {
      throw codedError("E_STORE", `cannot create ${dirname(this.#path)}: ${e.message}`, e);
    }
    return openSqlite({ path: this.#path, backend });
  }

  #closeShim() {
    if (this.#shim && this.#shim !== this.#sqlite) {
      try {
        this.#shim.close?.();
      } catch {
        // a broken connection may not close cleanly; it is dropped either way
      }
    }
    this.#shim = null;
  }

  /** After an error: a trapped module is discarded (its panic message kept in the returned
   * E_PANIC error); a store error drops the connection. Returns the coded error. */
  #forget(e) {
    let coded = asCoded(e);
    if (e?.code === "E_STORE") {
      this.#storeError = { code: e.code, message: e.message, at: new Date().toISOString() };
      this.#engine?.free();
      this.#engine = null;
      this.#closeShim();
    } else if (isTrap(e) && this.#glue) {
      coded = codedError("E_PANIC", `engine panic: ${panicMessage(this.#glue) ?? e.message}`, e);
      discardInstance(this.#glue);
      this.#glue = null;
      this.#engine = null;
    }
    return coded;
  }

  /** Rewrites one request. */
  async transform(messages, opts = {}) {
    const {
      model = "",
      format = "openai",
      strict = false,
      overheadTokens = 0,
      contextWindow = 0,
      reserveTokens = 0,
      cacheTtlMs = 0,
      nowMs,
    } = opts;
    // The background embedding waits while the request is in flight.
    const requestEnded = this.#embedderNow?.beginRequest?.();
    try {
      if (!Array.isArray(messages)) throw codedError("E_ARG", "messages must be an array");
      if (typeof format !== "string") throw codedError("E_FORMAT", "format must be a string");
      const engine = await this.#live();
      const wire = {
        model,
        format,
        overheadTokens,
        contextWindow,
        reserveTokens,
        cacheTtlMs,
        nowMs: nowMs ?? Date.now(),
      };
      const result = BY_ID.has(format)
        ? this.#byId(engine, messages, wire)
        : JSON.parse(engine.transform(serialise(messages), wire));
      this.#storeError = null;
      const { messages: out, sources } = applyRewrite(messages, result.rewrite);
      const st = result.stats;
      this.#lastRequest = { model, trim_at: st.trim_at, context_window: st.context_window };
      if (st.trimmed && this.#bank) {
        try {
          const text = this.#glue.episodeText(
            this.#sessionId,
            st.before_tokens,
            st.after_tokens,
            st.removed_messages,
          );
          this.#bank.add("episode", text, this.#sessionId, Date.now());
        } catch {
          // the episode is a record, never a reason to fail the request
        }
      }
      this.#kickEmbedding();
      return { messages: out, stats: st, sources };
    } catch (e) {
      const err = this.#forget(e);
      if (strict) throw err;
      this.#failOpens++;
      try {
        this.#engine?.recordFailOpen(String(model), Date.now());
      } catch (again) {
        this.#forget(again);
      }
      return {
        messages,
        sources: Array.isArray(messages) ? messages.map((_, i) => i) : [],
        stats: {
          before_tokens: null,
          after_tokens: null,
          trimmed: false,
          compressed: 0,
          fail_open: true,
          notice: null,
          error: { code: err.code, message: err.message },
        },
      };
    } finally {
      requestEnded?.();
    }
  }

  /** Runs a request by message ids (its parsed result): unchanged messages the engine saw in
   * the previous request are not serialised again; when the engine needs their texts after all,
   * every text is sent. */
  #byId(engine, messages, wire) {
    if (this.#ids?.engine !== engine || this.#ids.format !== wire.format)
      this.#ids = {
        engine,
        format: wire.format,
        ids: new MessageIds({ keyOf: BY_ID.get(wire.format) }),
      };
    const ids = this.#ids.ids;
    let req = ids.request(messages);
    stageTexts(engine, req.send);
    let out = engine.transformCached(req.ids, req.fresh, wire);
    if (out === undefined) {
      req = ids.request(messages, true);
      stageTexts(engine, req.send);
      out = engine.transformCached(req.ids, req.fresh, wire);
    }
    if (out === undefined) throw codedError("E_STORE", "the engine refused every message text");
    const result = JSON.parse(out);
    ids.accepted(req, result.rewrite);
    return result;
  }

  /** How many messages requests by id have serialised so far (unchanged ones are not). */
  get serialisedMessages() {
    return this.#ids?.ids.serialised ?? 0;
  }

  /**
   * Writes the store to its file now. Backends that write through (bun:sqlite, node:sqlite,
   * better-sqlite3) have nothing to do; sql.js keeps the database in memory and otherwise writes it
   * a second after the last change. Call it before another process reads the file (the MCP server,
   * `smarter-compact status`). Never throws: returns false when the write failed, and `status()`
   * then says why.
   */
  flush() {
    try {
      this.#shim?.flush?.();
      return true;
    } catch (e) {
      this.#storeError ??= {
        code: "E_STORE",
        message: `could not write the store: ${e?.message ?? e}`,
        at: new Date().toISOString(),
      };
      return false;
    }
  }

  /** Runs `fn(engine)`; engine errors come out as coded Errors. */
  async #call(fn) {
    try {
      return fn(await this.#live());
    } catch (e) {
      throw this.#forget(e);
    }
  }

  /** Makes the next `transform` trim, whatever the request's size. */
  async compactNow() {
    await this.#call((e) => e.compactNow());
  }

  /** Asks the next `transform` (of this process or whichever serves the session next) to lift
   * the latest cut; resolves to what that will do (`RestorePlan`: `cut` is null when no cut is
   * in force). */
  async restore() {
    return this.#call((e) => e.requestRestore());
  }

  /** `smart_compact_search`: ranked hits `{hits, text, mode, coverage, reason}`: "auto" is
   * hybrid when the embedder is free and vectors exist, else full-text with the reason. */
  async search(query, { limit = 8, scope = "trimmed", mode = "auto" } = {}) {
    if (typeof query !== "string" || !query.trim())
      throw codedError("E_ARG", "query must be a non-empty string");
    if (!Number.isInteger(limit) || limit < 1)
      throw codedError("E_ARG", "limit must be a positive integer"); // the engine checks the maximum
    if (!SCOPES.has(scope)) throw codedError("E_ARG", 'scope must be "trimmed" or "all"');
    if (!MODES.has(mode)) throw codedError("E_ARG", 'mode must be "auto", "fts" or "hybrid"');
    const embedder = mode === "fts" ? null : await this.#embedder();
    let reason = null;
    if (mode === "hybrid") {
      // Forced: every stored chunk gets its vector first, so the ranking is fully hybrid (read-only:
      // with the vectors the writer stored, as nothing can be written back).
      if (!embedder)
        throw codedError(
          "E_NO_MODEL",
          'mode "hybrid" needs the embedding model; "auto" falls back to full-text without it',
        );
      await this.settled();
      await this.#live();
      if (!this.#readonly)
        await embedBacklog(
          embedder,
          () => (this.#engine ? { engine: this.#engine, bank: null } : null),
          { priority: "normal" },
        );
    }
    // "auto" never waits for the worker: while it computes (the background backlog), the answer
    // is full-text and says so; otherwise the query's embedding goes before anything queued.
    let qv;
    if (embedder && mode === "auto" && embedder.busy) reason = BUSY_REASON;
    else if (embedder) qv = (await embedder.embed([query], { priority: "query" }))[0];
    return await this.#call((e) => e.search(query, limit, scope, qv, reason));
  }

  /** `smart_compact_get`: a page of a compressed output or a message, or of its lines that
   * contain `grep`, `{page, text}`. */
  async get(id, { start_line, end_line, grep } = {}) {
    if (typeof id !== "string" && !Number.isInteger(id))
      throw codedError("E_ARG", "id must be a string or a message number");
    for (const [k, v] of Object.entries({ start_line, end_line })) {
      if (v !== undefined && (!Number.isInteger(v) || v < 1))
        throw codedError("E_ARG", `${k} must be a positive integer`);
    }
    if (grep !== undefined && typeof grep !== "string")
      throw codedError("E_ARG", "grep must be a string");
    return await this.#call((e) => e.get(String(id), start_line ?? 0, end_line ?? 0, grep ?? ""));
  }

  /** `smart_compact_sql`: one read-only query, `{columns, rows, truncated, text}`. */
  async sql(statement, { timeoutMs = SQL_TIMEOUT_MS } = {}) {
    if (typeof statement !== "string") throw codedError("E_ARG", "sql must be a string");
    await this.#live();
    const checked = asCodedCall(() => this.#glue.checkSql(statement));
    const shim = this.#shim;
    if (!shim?.path || !shim?.kind)
      throw codedError("E_SQL", "the SQL tool needs a file-backed SQLite backend");
    shim.flush?.(); // sql.js: the child reads the file
    const res = await runReadonlySql({
      kind: shim.kind,
      path: shim.path,
      sql: checked,
      maxRows: 200,
      timeoutMs,
    });
    return { ...res, text: this.#glue.renderSqlRows(res) };
  }

  /** `context_status`: thresholds, store, trims, fail-opens, usage. */
  async status() {
    let engine = null;
    try {
      engine = (await this.#live()).status();
      if (this.#readonly) this.#storeError = null; // a reader's error is only ever about opening
    } catch (e) {
      const err = this.#forget(e);
      this.#storeError ??= { code: err.code, message: err.message, at: new Date().toISOString() };
    }
    const base = {
      session_id: this.#sessionId,
      store: {
        path: this.#path,
        backend: this.#shim?.kind ?? null,
        readonly: this.#readonly,
        ok: true,
        error: null,
      },
    };
    if (this.#storeError) base.store = { ...base.store, ok: false, error: this.#storeError };
    const status = { ...(engine ?? {}), ...base };
    status.fail_opens = Math.max(engine?.fail_opens ?? 0, this.#failOpens);
    status.last_request = this.#lastRequest;
    status.text = statusText(status);
    return status;
  }

  /** What compact_context needs from this session: the embedder, the bank, a source name. */
  async memoryContext() {
    await this.#live();
    return { embedder: await this.#embedder(), bank: this.#bank, source: this.#sessionId };
  }

  /** Flushes and releases the store and the bank. */
  async close() {
    this.#engine?.free();
    this.#engine = null;
    this.#closeShim();
    this.#bank?.free();
    this.#bank = null;
    this.#bankShim?.close?.();
    this.#bankShim = null;
  }
}

/** The message of the panic behind a trap, when the instance can still tell it. */
function panicMessage(glue) {
  try {
    return glue.takePanic();
  } catch {
    return undefined; // the trap came from a corrupted instance, not a panic
  }
}

/** The request's JSON text (E_ARG when it has none). */
function serialise(messages) {
  return serialiseWith(() => JSON.stringify(messages));
}

/** Stages the JSON text of each message in `send` for the engine's next cached request, one
 * string at a time (each is garbage by the next minor collection); what JSON does not hold
 * (undefined, a function) goes as null, as in an array. A message JSON cannot write leaves
 * nothing staged (the engine's `transformCached` takes what is). */
function stageTexts(engine, send) {
  let text;
  for (const m of send) {
    try {
      text = JSON.stringify(m) ?? "null";
    } catch (e) {
      engine.clearTexts();
      throw codedError("E_ARG", `messages must be JSON-serialisable: ${e.message}`, e);
    }
    engine.pushText(text);
  }
}

function serialiseWith(fn) {
  try {
    return fn();
  } catch (e) {
    throw codedError("E_ARG", `messages must be JSON-serialisable: ${e.message}`, e);
  }
}

function asCodedCall(fn) {
  try {
    return fn();
  } catch (e) {
    throw asCoded(e);
  }
}

/**
 * Creates the compactor of one session. `sqlite` is a backend name ("bun:sqlite", "node:sqlite",
 * "better-sqlite3", "sql.js"), or a shim object `{exec, query, kind?, path?}`; by default the best
 * backend of the runtime. `embedder`: an embedder from `createEmbedder()`, `false` for none, or by
 * default the process-wide one when the model is installed (used in the background only). Rejects
 * only for an unusable session id (E_BAD_ID): a store that cannot be opened makes requests pass
 * through unchanged until it can. `readonly: true` opens the existing store to read it only
 * (status, search, sql, get): nothing is created or written; a missing store is E_NO_SESSION and
 * a store sql.js cannot read fully (another process's WAL) E_STORE_WAL, both in `status().store`.
 */
export async function createCompactor({
  sessionId,
  stateDir,
  sqlite,
  config,
  embedder,
  readonly = false,
  projectDir = null,
} = {}) {
  if (typeof sessionId !== "string") throw codedError("E_BAD_ID", "sessionId must be a string");
  const glue = await engineModule();
  asCodedCall(() => glue.validateId(sessionId));
  const dir = resolveStateDir(stateDir);
  return new Compactor(
    sessionId,
    dir,
    engineOptions(dir, config, projectDir),
    sqlite,
    embedder,
    readonly === true,
  );
}

/** Version of the engine. */
export async function version() {
  return (await engineModule()).version();
}

/** The engine's contracts: formats, error codes, environment keys, limits. */
export async function constants() {
  return (await engineModule()).constants();
}
