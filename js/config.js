// Where the state lives and what the engine is configured with: environment variables and
// `<state dir>/context/config.toml` are read here (the engine itself never touches the process).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The state directory: explicit, else SMARTER_COMPACT_STATE_DIR, else ~/.local/share/smarter-compact. */
export function resolveStateDir(explicit) {
  return (
    explicit ||
    process.env.SMARTER_COMPACT_STATE_DIR ||
    join(homedir(), ".local", "share", "smarter-compact")
  );
}

/** Path of config.toml under a state directory. */
export function configPath(stateDir) {
  return join(stateDir, "context", "config.toml");
}

/** The engine's options JSON: environment values, config.toml text, host options. */
export function engineOptions(stateDir, config = {}) {
  // The engine picks the keys it knows (its `constants().envKeys`); the rest are ignored.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith("CONTEXT_")),
  );
  let toml = null;
  const file = configPath(stateDir);
  try {
    if (existsSync(file)) toml = readFileSync(file, "utf8");
  } catch {
    toml = null; // unreadable config: defaults apply
  }
  return { env, toml, config: config ?? {} };
}
