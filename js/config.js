// Where the state lives and what the engine is configured with: environment variables, the
// user's `<state dir>/context/config.toml` and the project's `.smarter-compact.toml` are read here
// (the engine itself never touches the process).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

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

/** The project's configuration file name. */
export const PROJECT_CONFIG = ".smarter-compact.toml";

/** The project's `.smarter-compact.toml`: in `projectDir` or the nearest folder above it, up to
 * the repository's root (the first folder holding `.git`); null when there is none. */
export function projectConfigPath(projectDir) {
  if (typeof projectDir !== "string" || !projectDir) return null;
  for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
    const file = join(dir, PROJECT_CONFIG);
    if (existsSync(file)) return file;
    if (existsSync(join(dir, ".git")) || dirname(dir) === dir) return null;
  }
}

/** A config file's text, or null when it is missing or unreadable (defaults apply). */
function readConfig(file) {
  try {
    return file && existsSync(file) ? readFileSync(file, "utf8") : null;
  } catch {
    return null;
  }
}

/** The engine's options JSON: environment values, the user's config.toml and the project's
 * `.smarter-compact.toml` (when `projectDir` is given), host options. */
export function engineOptions(stateDir, config = {}, projectDir = null) {
  // The engine picks the keys it knows (its `constants().envKeys`); the rest are ignored.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith("CONTEXT_")),
  );
  return {
    env,
    toml: readConfig(configPath(stateDir)),
    projectToml: readConfig(projectConfigPath(projectDir)),
    config: config ?? {},
  };
}
