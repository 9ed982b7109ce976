// Running the built command line in tests: a clean environment (no engine variables of the
// machine, HOME in a temp dir) and a state dir holding real replayed sessions.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCompactor } from "../../../npm/js/index.js";
import { loadSession, replay } from "../../../npm/js/sessions.js";
import { scratchDir } from "./scratch.mjs";

export const CLI = fileURLToPath(new URL("../../../npm/js/cli.js", import.meta.url));
export const HOSTS = fileURLToPath(new URL("../../../npm/js/hosts/", import.meta.url));
export const SESSIONS = fileURLToPath(new URL("../../data/sessions/swe-traj/", import.meta.url));

/** The environment of a run: this one without the variables the CLI reads (but the SQLite
 * backend choice), with no embedding model (so `embedding` is false whatever is built), plus
 * `extra`. */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(CONTEXT_|SMARTER_COMPACT_(?!SQLITE$)|XDG_CONFIG_HOME$|PI_CODING_AGENT_DIR$)/.test(k))
      continue; // the backend choice stays
    env[k] = v;
  }
  return {
    ...env,
    HOME: tempDir("sc-home-"),
    SMARTER_COMPACT_MODEL_DIR: join(tempDir("sc-nomodel-"), "none"),
    ...extra,
  };
}

/** Runs `smarter-compact ...args`; returns `{ code, stdout, stderr }`. */
export function run(args, { env = {}, input } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: cleanEnv(env),
    input,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Replays a real session (by file name) into `stateDir` as `sessionId`, at trim_at 8000. */
export async function replayInto(stateDir, file, sessionId) {
  const { history } = loadSession(join(SESSIONS, file));
  const c = await createCompactor({ sessionId, stateDir, config: { trimAtTokens: 8000 } });
  let last = null;
  for await (const step of replay(c, history)) last = step;
  const status = await c.status();
  await c.close();
  return { history, status, last };
}

/** A fresh temp directory, removed when the test process exits. */
export const tempDir = (prefix = "sc-cli-") => scratchDir(prefix);
