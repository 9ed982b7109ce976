// The public API of smarter-compact (DESIGN §10).
import { resolveStateDir, engineOptions } from "./config.js";
import { asCoded, codedError, isTrap } from "./errors.js";
import { applyPlan } from "./plan.js";
import { engineModule, discardInstance } from "./wasm.js";

export { codedError } from "./errors.js";

const FORMATS = new Set(["openai", "anthropic"]);

/**
 * A compactor for one session. `transform` never throws unless `strict` is set: on any error the
 * request goes out unchanged and `stats.fail_open` is true.
 */
class Compactor {
  #sessionId;
  #options;
  #glue = null;
  #engine = null;
  #failOpens = 0;

  constructor(sessionId, options) {
    this.#sessionId = sessionId;
    this.#options = options;
  }

  async #live() {
    if (!this.#engine) {
      this.#glue = await engineModule();
      this.#engine = new this.#glue.Engine(this.#sessionId, this.#options);
    }
    return this.#engine;
  }

  #forget(e) {
    if (isTrap(e) && this.#glue) {
      discardInstance(this.#glue);
      this.#engine = null;
    }
  }

  /** Rewrites one request. */
  async transform(messages, opts = {}) {
    const { model = "", format = "openai", strict = false, overheadTokens = 0 } = opts;
    try {
      if (!Array.isArray(messages)) throw codedError("E_ARG", "messages must be an array");
      if (!FORMATS.has(format)) throw codedError("E_FORMAT", `unknown format ${JSON.stringify(format)}`);
      const engine = await this.#live();
      const body = JSON.stringify(messages);
      const result = JSON.parse(engine.transform(body, JSON.stringify({ model, format, overheadTokens, nowMs: Date.now() })));
      return { messages: applyPlan(messages, result.plan), stats: result.stats };
    } catch (e) {
      const err = asCoded(e);
      this.#forget(e);
      if (strict) throw err;
      this.#failOpens++;
      try {
        this.#engine?.recordFailOpen(String(model), Date.now());
      } catch (again) {
        this.#forget(again);
      }
      return {
        messages,
        stats: { before_tokens: null, after_tokens: null, trimmed: false, compressed: 0, fail_open: true, error: { code: err.code, message: err.message } },
      };
    }
  }

  /** Makes the next `transform` trim, whatever the request's size. */
  async compactNow() {
    (await this.#live()).compactNow();
  }

  /** The session status: thresholds, trims, fail-opens, usage. */
  async status() {
    const status = JSON.parse((await this.#live()).status());
    status.fail_opens = Math.max(status.fail_opens, this.#failOpens);
    return status;
  }

  /** Releases the engine. */
  async close() {
    this.#engine?.free();
    this.#engine = null;
  }
}

/** Creates the compactor of one session. */
export async function createCompactor({ sessionId, stateDir, config } = {}) {
  if (typeof sessionId !== "string") throw codedError("E_BAD_ID", "sessionId must be a string");
  const c = new Compactor(sessionId, engineOptions(resolveStateDir(stateDir), config));
  try {
    await c.status(); // opens the engine: a bad id or broken module fails here, with a code
  } catch (e) {
    throw asCoded(e);
  }
  return c;
}

/** Version of the engine. */
export async function version() {
  return (await engineModule()).version();
}
