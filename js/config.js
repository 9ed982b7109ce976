// Where the state lives and what the engine is configured with: environment variables and
// `<state dir>/context/config.toml` are read here (the engine itself never touches the process).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Environment variables the engine reads. */
export const ENV_KEYS = [
  "CONTEXT_TRIM_AT_TOKENS",
  "CONTEXT_TRIM_TO_FRACTION",
  "CONTEXT_COMPRESS_OVER_TOKENS",
  "CONTEXT_COMPACTION_RECALL",
  "CONTEXT_MEMORY_BANK",
];

/** The state directory: explicit, else SMARTER_COMPACT_STATE_DIR, else ~/.local/share/smarter-compact. */
export function resolveStateDir(explicit) {
  return explicit || process.env.SMARTER_COMPACT_STATE_DIR || join(homedir(), ".local", "share", "smarter-compact");
}

/** Path of config.toml under a state directory. */
export function configPath(stateDir) {
  return join(stateDir, "context", "config.toml");
}

/** The engine's options JSON: environment values, config.toml text, host options. */
export function engineOptions(stateDir, config = {}) {
  const env = {};
  for (const k of ENV_KEYS) if (process.env[k] !== undefined) env[k] = process.env[k];
  let toml = null;
  const file = configPath(stateDir);
  try {
    if (existsSync(file)) toml = readFileSync(file, "utf8");
  } catch {
    toml = null; // unreadable config: defaults apply
  }
  return JSON.stringify({ env, toml, config: config ?? {} });
}
