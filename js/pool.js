// One compactor per session id, shared by the host plugins and the proxy, and host options →
// engine config.
import { createCompactor } from "./compactor.js";
import { engineOptions, resolveStateDir } from "./config.js";
import { engineModule } from "./wasm.js";

const CONFIG_KEYS = [
  "trimAtTokens",
  "trimAtFraction",
  "trimToFraction",
  "compressOverTokens",
  "compactionRecall",
  "notify",
  "protectedTools",
  "memoryBank",
  "subagents",
];

/** Engine config from host options (OpenCode plugin options, Pi settings): camelCase keys. */
export function configFrom(options = {}) {
  const config = {};
  for (const k of CONFIG_KEYS) if (options?.[k] !== undefined) config[k] = options[k];
  return config;
}

/** One compactor per session id, created on first use; `options.projectDir` is where the
 * project's `.smarter-compact.toml` is looked for. */
export function compactorPool(options = {}) {
  const pool = new Map();
  let subagents = null;
  return {
    get(sessionId) {
      let c = pool.get(sessionId);
      if (!c) {
        c = createCompactor({
          sessionId,
          stateDir: options.stateDir,
          sqlite: options.sqlite,
          config: configFrom(options),
          projectDir: options.projectDir,
        });
        pool.set(sessionId, c);
        c.catch(() => pool.delete(sessionId)); // a bad id is not cached; the next call reports it again
      }
      return c;
    },
    /** Whether subagent sessions are trimmed (config `subagents`, on by default), resolved once
     * per pool from the same sources as each compactor's config; on when it cannot be read. */
    trimsSubagents() {
      subagents ??= (async () => {
        try {
          const dir = resolveStateDir(options.stateDir);
          const opts = engineOptions(dir, configFrom(options), options.projectDir ?? null);
          return (await engineModule()).resolveConfig(opts).subagents !== false;
        } catch {
          return true;
        }
      })();
      return subagents;
    },
    async closeAll() {
      for (const c of pool.values()) await (await c.catch(() => null))?.close();
      pool.clear();
    },
  };
}

/** Session ids from hosts, made safe for file names (a host id with odd characters is hashed in). */
export function safeSessionId(id) {
  const s = String(id ?? "");
  if (/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(s)) return s;
  let h = 0;
  for (const ch of s) h = (Math.imul(h, 31) + ch.codePointAt(0)) >>> 0;
  return `${s.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100)}-${h.toString(16)}`;
}
