// Run the real Claude Code and Codex CLIs headless and offline against a scripted upstream
// (./anthropic-server.mjs, ./responses-server.mjs) — or against anything in between, e.g. our proxy.
//
//   const up = await startAnthropicServer({ script });
//   const r = await runClaude({ server: up, prompt: "please run echo hi" });
//   // r = { code, signal, timedOut, ms, stdout, stderr, events, result, sessionId, requests, home, args }
//
//   const up = await startResponsesServer({ script });
//   const c = await runCodex({ server: up, prompt: "please run echo hi" });
//   // c = { code, signal, timedOut, ms, stdout, stderr, events, result, threadId, usage, requests, home, args }
//
// `server` is the scripted upstream (its requests made during the run are returned in `requests`);
// `baseURL` overrides where the CLI is pointed (e.g. the proxy in front of `server`). For Claude the
// base URL is the origin (the CLI appends /v1/messages); for Codex it ends in /v1 (Codex appends
// /responses).
//
// Multi-turn: create the home once and pass it to every turn, `resume: true` on later turns:
//   const home = setupClaudeHome({ server: up });
//   await runClaude({ home, prompt: "turn one" });                 // --session-id <uuid> (home.sessionId)
//   await runClaude({ home, prompt: "turn two", resume: true });   // --resume <home.sessionId>
//   const cx = setupCodexHome({ server: up });
//   await runCodex({ home: cx, prompt: "turn one" });              // records home.threadId
//   await runCodex({ home: cx, prompt: "turn two", resume: true }); // exec resume <threadId> (or --last)
//
// MCP: `mcpServers: { echo: { command, args, env } }` (in setup*Home or in the run options when the
// run creates the home). Claude gets them via --mcp-config <file> --strict-mcp-config and the tools
// are allowed with --allowedTools mcp__<server>; Codex gets [mcp_servers.<name>] in config.toml.
// Both CLIs name an MCP tool `mcp__<server>__<tool>` in the request's tools.

import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { scratchDir } from "../../js/helpers/scratch.mjs";

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const NODE_MODULES = path.join(E2E_DIR, "node_modules");
export const ECHO_MCP = path.join(E2E_DIR, "fixtures", "echo-mcp.mjs");

// ---- binaries ---------------------------------------------------------------------------------

function pkgJson(name) {
  const file = path.join(NODE_MODULES, ...name.split("/"), "package.json");
  if (!fs.existsSync(file))
    throw new Error(
      `${name} is not installed in ${NODE_MODULES}: run \`npm install\` in ${E2E_DIR}`,
    );
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

/** Absolute paths and versions of the two CLIs. */
export function cliPaths() {
  const cc = pkgJson("@anthropic-ai/claude-code");
  const ccDir = path.join(NODE_MODULES, "@anthropic-ai", "claude-code");
  // bin/claude.exe is the native binary hard-linked by the postinstall; without the postinstall
  // (--ignore-scripts) it is a stub, so fall back to the platform package's binary.
  let claude = path.join(ccDir, "bin", "claude.exe");
  const platformBin = path.join(
    NODE_MODULES,
    "@anthropic-ai",
    `claude-code-${process.platform}-${process.arch}`,
    "claude",
  );
  if (!fs.existsSync(claude) || fs.statSync(claude).size < 1_000_000) claude = platformBin;
  const cx = pkgJson("@openai/codex");
  // bin/codex.js is the npm launcher: it puts the vendored rg on PATH and execs the native binary.
  const codexJs = path.join(NODE_MODULES, "@openai", "codex", "bin", "codex.js");
  return {
    claude,
    claudeVersion: cc.version,
    codexJs,
    codexVersion: cx.version,
    node: process.execPath,
  };
}

// ---- common -----------------------------------------------------------------------------------

function mkRoot(prefix, base = process.env.E2E_TMP || os.tmpdir()) {
  fs.mkdirSync(base, { recursive: true });
  return scratchDir(prefix, base);
}

/** Codex refuses to create its PATH aliases under the system temp dir (warning on every run),
 * so its homes go to /var/tmp (or $E2E_CODEX_TMP) unless E2E_TMP points outside the temp dir. */
function codexBase() {
  if (process.env.E2E_CODEX_TMP) return process.env.E2E_CODEX_TMP;
  const tmp = fs.realpathSync(os.tmpdir());
  const e2e = process.env.E2E_TMP && path.resolve(process.env.E2E_TMP);
  if (e2e && !(e2e + path.sep).startsWith(tmp + path.sep)) return e2e;
  return path.join("/var/tmp", "smarter-compact-e2e");
}

/** Only what a CLI needs from the parent environment; no API keys or user config leak in. */
function baseEnv(home) {
  const env = {};
  for (const k of ["PATH", "LANG", "LC_ALL", "TZ", "SHELL"])
    if (process.env[k] != null) env[k] = process.env[k];
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    TERM: "dumb",
    NO_COLOR: "1",
  });
  return env;
}

function parseJsonLines(text) {
  const out = [];
  for (const line of String(text).split("\n")) {
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

/** Spawn with stdin closed (/dev/null), collect output, kill the whole process group on timeout.
 * Result: { code, signal, timedOut, ms, tStart, tExit (hi-res epoch ms, comparable with the upstreams'
 * tArrive / tFirstByte), stdout, stderr }. */
export function runCli(cmd, args, { cwd, env, timeoutMs = 60_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const tStart = performance.timeOrigin + t0; // same clock as the upstreams' tArrive/tFirstByte
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
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
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Reap leftovers in the group (MCP servers, shells).
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group has already exited
      }
      resolve({
        code,
        signal,
        timedOut,
        ms: Math.round(performance.now() - t0),
        tStart,
        tExit: performance.timeOrigin + performance.now(),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

async function runAndCollect(server, cmd, args, opts) {
  const before = server?.requests?.length ?? 0;
  const r = await runCli(cmd, args, opts);
  const requests = server?.requests ? server.requests.slice(before) : [];
  return { ...r, events: parseJsonLines(r.stdout), requests, args: [cmd, ...args] };
}

function urlOf({ server, baseURL }, kind) {
  const url = baseURL ?? server?.url;
  if (!url) throw new Error(`pass \`server\` (from start${kind}Server) or \`baseURL\``);
  return url;
}

/** `{ name: { command, args, env } }` with defaults: the echo fixture under this Node. */
export function echoMcpServer({ log, name = "echo", toolName } = {}) {
  const env = {};
  if (log) env.ECHO_MCP_LOG = log;
  if (toolName) env.ECHO_MCP_NAME = toolName;
  return { [name]: { command: process.execPath, args: [ECHO_MCP], env } };
}

/** Remove a home made by setupClaudeHome / setupCodexHome (kept when E2E_KEEP=1). */
export function cleanup(home) {
  if (!home?.root || process.env.E2E_KEEP === "1") return;
  fs.rmSync(home.root, { recursive: true, force: true });
}

// ---- Claude Code ------------------------------------------------------------------------------

/** Env that keeps Claude Code on loopback and fast to fail. */
export const CLAUDE_ENV = {
  ANTHROPIC_API_KEY: "sk-ant-mock",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_ERROR_REPORTING: "1",
  DISABLE_BUG_COMMAND: "1",
  CLAUDE_CODE_DISABLE_FEATURE_FLAGS: "1",
  CLAUDE_CODE_MAX_RETRIES: "1",
};

/**
 * Isolated HOME (+ project dir) for Claude Code. `mcpServers` are written to <root>/mcp.json
 * (passed with --mcp-config). `settings` (object) goes to ~/.claude/settings.json.
 */
export function setupClaudeHome({
  server,
  baseURL,
  mcpServers,
  settings,
  root = mkRoot("e2e-claude-"),
} = {}) {
  const home = path.join(root, "home");
  const proj = path.join(root, "proj");
  for (const d of [home, proj]) fs.mkdirSync(d, { recursive: true });
  let mcpConfig = null;
  if (mcpServers && Object.keys(mcpServers).length) {
    mcpConfig = path.join(root, "mcp.json");
    const servers = Object.fromEntries(
      Object.entries(mcpServers).map(([k, v]) => [k, { type: "stdio", env: {}, args: [], ...v }]),
    );
    fs.writeFileSync(mcpConfig, JSON.stringify({ mcpServers: servers }, null, 2));
  }
  if (settings) {
    fs.mkdirSync(path.join(home, ".claude"), { recursive: true });
    fs.writeFileSync(
      path.join(home, ".claude", "settings.json"),
      JSON.stringify(settings, null, 2),
    );
  }
  return {
    kind: "claude",
    root,
    home,
    proj,
    server,
    baseURL: baseURL ?? server?.url,
    mcpConfig,
    mcpServerNames: Object.keys(mcpServers ?? {}),
    sessionId: null,
  };
}

/**
 * `claude -p <prompt> --output-format stream-json --verbose` once.
 * - `resume`: true → --resume <home.sessionId>; a string → --resume <that id>; otherwise a fresh
 *   --session-id (given `sessionId` or a new UUID), stored in home.sessionId.
 * - `allowedTools` (default: Bash plus every configured MCP server as `mcp__<name>`).
 * - `outputFormat: "json"` gives one JSON object on stdout instead of the event stream.
 * - `model` → --model; `bare: true` → --bare (tiny request; not representative).
 * Returns { ..., events, result (the final {type:"result"} object), sessionId }.
 */
export async function runClaude({
  prompt,
  server,
  baseURL,
  home,
  env = {},
  extraArgs = [],
  timeoutMs = 60_000,
  resume = false,
  sessionId,
  allowedTools,
  outputFormat = "stream-json",
  model,
  bare = false,
  cwd,
  mcpServers,
  settings,
} = {}) {
  home ??= setupClaudeHome({ server, baseURL, mcpServers, settings });
  server ??= home.server;
  const url = baseURL ?? home.baseURL ?? urlOf({ server, baseURL }, "Anthropic");
  const args = ["-p", prompt, "--output-format", outputFormat];
  if (outputFormat === "stream-json") args.push("--verbose");
  if (resume) {
    const id = typeof resume === "string" ? resume : home.sessionId;
    if (!id)
      throw new Error("runClaude: resume without a previous session (home.sessionId is empty)");
    args.push("--resume", id);
    home.sessionId = id;
  } else {
    home.sessionId = sessionId ?? crypto.randomUUID();
    args.push("--session-id", home.sessionId);
  }
  const allow = allowedTools ?? ["Bash", ...(home.mcpServerNames ?? []).map((n) => `mcp__${n}`)];
  if (allow.length) args.push("--allowedTools", allow.join(","));
  if (home.mcpConfig) args.push("--mcp-config", home.mcpConfig, "--strict-mcp-config");
  if (model) args.push("--model", model);
  if (bare) args.push("--bare");
  args.push(...extraArgs);
  const fullEnv = { ...baseEnv(home.home), ...CLAUDE_ENV, ANTHROPIC_BASE_URL: url, ...env };
  const r = await runAndCollect(server, cliPaths().claude, args, {
    cwd: cwd ?? home.proj,
    env: fullEnv,
    timeoutMs,
  });
  let result = r.events.filter((e) => e.type === "result").at(-1) ?? null;
  if (!result && outputFormat === "json") result = r.events.at(-1) ?? null;
  return { ...r, result, sessionId: result?.session_id ?? home.sessionId, home };
}

// ---- Codex ------------------------------------------------------------------------------------

export const CODEX_PROVIDER = "mock";
export const CODEX_KEY_ENV = "MOCK_API_KEY";
export const CODEX_DEFAULT_MODEL = "gpt-5.5";

/** Minimal TOML writer for config.toml (strings, numbers, booleans, arrays, nested [tables]). */
export function toToml(obj) {
  const key = (k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));
  const isTable = (v) => v && typeof v === "object" && !Array.isArray(v);
  const val = (v) => {
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    if (Array.isArray(v)) return `[${v.map(val).join(", ")}]`;
    throw new Error(`toToml: cannot encode ${typeof v}`);
  };
  const lines = [];
  const emit = (o, prefix) => {
    const scalars = Object.entries(o).filter(([, v]) => !isTable(v));
    const tables = Object.entries(o).filter(([, v]) => isTable(v));
    if (prefix.length && (scalars.length || !tables.length))
      lines.push(`[${prefix.map(key).join(".")}]`);
    for (const [k, v] of scalars) lines.push(`${key(k)} = ${val(v)}`);
    if (scalars.length || (prefix.length && !tables.length)) lines.push("");
    for (const [k, v] of tables) emit(v, [...prefix, k]);
  };
  emit(obj, []);
  return lines.join("\n");
}

/**
 * Isolated CODEX_HOME + HOME + project dir, with config.toml pointing model provider "mock" at the
 * upstream: Responses wire API, no retries, analytics off, no update check, approval "never",
 * sandbox danger-full-access. `mcpServers` → [mcp_servers.<name>]; `config` is deep-merged last.
 */
export function setupCodexHome({
  server,
  baseURL,
  model = CODEX_DEFAULT_MODEL,
  mcpServers,
  config = {},
  sandbox = "danger-full-access",
  root = mkRoot("codex-", codexBase()),
} = {}) {
  const url = baseURL ?? server?.url;
  const home = path.join(root, "home");
  const codexHome = path.join(root, "codex_home");
  const proj = path.join(root, "proj");
  for (const d of [home, codexHome, proj]) fs.mkdirSync(d, { recursive: true });
  const cfg = {
    model,
    model_provider: CODEX_PROVIDER,
    approval_policy: "never",
    sandbox_mode: sandbox,
    check_for_update_on_startup: false,
    analytics: { enabled: false },
    model_providers: {
      [CODEX_PROVIDER]: {
        name: "Scripted mock",
        base_url: url ?? "http://127.0.0.1:9/v1",
        env_key: CODEX_KEY_ENV,
        wire_api: "responses",
        request_max_retries: 0,
        stream_max_retries: 0,
        stream_idle_timeout_ms: 30_000,
      },
    },
  };
  if (mcpServers && Object.keys(mcpServers).length) {
    cfg.mcp_servers = Object.fromEntries(
      Object.entries(mcpServers).map(([k, v]) => [
        k,
        {
          command: v.command,
          args: v.args ?? [],
          ...(v.env && Object.keys(v.env).length ? { env: { ...v.env } } : {}),
          ...(v.extra ?? {}),
        },
      ]),
    );
  }
  deepMerge(cfg, config);
  const configFile = path.join(codexHome, "config.toml");
  fs.writeFileSync(configFile, toToml(cfg));
  return {
    kind: "codex",
    root,
    home,
    codexHome,
    proj,
    configFile,
    config: cfg,
    server,
    baseURL: url,
    threadId: null,
  };
}

function deepMerge(a, b) {
  for (const [k, v] of Object.entries(b ?? {})) {
    if (
      v &&
      typeof v === "object" &&
      !Array.isArray(v) &&
      a[k] &&
      typeof a[k] === "object" &&
      !Array.isArray(a[k])
    )
      deepMerge(a[k], v);
    else a[k] = v;
  }
  return a;
}

/**
 * `codex exec --json --skip-git-repo-check --disable plugins --disable apps <prompt>` with stdin closed.
 * - `resume`: true → `exec resume <home.threadId>` (or `--last` if unknown); a string → that id.
 * - `baseURL` (if it differs from the home's) is passed as `-c model_providers.mock.base_url=…`.
 * Returns { ..., events, result (last agent_message text), threadId, usage (turn.completed) }.
 */
export async function runCodex({
  prompt,
  server,
  baseURL,
  home,
  env = {},
  extraArgs = [],
  timeoutMs = 60_000,
  resume = false,
  cwd,
  model,
  mcpServers,
  config,
} = {}) {
  home ??= setupCodexHome({ server, baseURL, mcpServers, config });
  server ??= home.server;
  const url = baseURL ?? home.baseURL ?? urlOf({ server, baseURL }, "Responses");
  const common = ["--json", "--skip-git-repo-check", "--disable", "plugins", "--disable", "apps"];
  if (url !== home.config.model_providers[CODEX_PROVIDER].base_url) {
    common.push("-c", `model_providers.${CODEX_PROVIDER}.base_url=${JSON.stringify(url)}`);
  }
  if (model) common.push("-m", model);
  common.push(...extraArgs);
  let args;
  if (resume) {
    const id = typeof resume === "string" ? resume : home.threadId;
    args = ["exec", "resume", ...common, ...(id ? [id] : ["--last"]), prompt];
  } else {
    args = ["exec", ...common, prompt];
  }
  const fullEnv = {
    ...baseEnv(home.home),
    CODEX_HOME: home.codexHome,
    [CODEX_KEY_ENV]: "sk-mock",
    ...env,
  };
  const { node, codexJs } = cliPaths();
  const r = await runAndCollect(server, node, [codexJs, ...args], {
    cwd: cwd ?? home.proj,
    env: fullEnv,
    timeoutMs,
  });
  const threadId = r.events.find((e) => e.type === "thread.started")?.thread_id ?? null;
  if (threadId) home.threadId = threadId;
  const messages = r.events.filter(
    (e) => e.type === "item.completed" && e.item?.type === "agent_message",
  );
  const usage = r.events.filter((e) => e.type === "turn.completed").at(-1)?.usage ?? null;
  return {
    ...r,
    result: messages.at(-1)?.item?.text ?? null,
    threadId: threadId ?? home.threadId,
    usage,
    home,
  };
}

/** Items of a given type from Codex --json events (item.completed), e.g. "command_execution", "mcp_tool_call". */
export function codexItems(events, type) {
  return events
    .filter((e) => e.type === "item.completed" && (!type || e.item?.type === type))
    .map((e) => e.item);
}

/** tool_use / tool_result pairs from Claude stream-json events. */
export function claudeToolUses(events) {
  const uses = [];
  for (const e of events) {
    if (e.type === "assistant")
      for (const b of e.message?.content ?? []) if (b.type === "tool_use") uses.push(b);
  }
  return uses;
}
