// The proxy as a background process: started on demand (by `enable claude|codex`, by
// `smarter-compact mcp --ensure-proxy` which both CLIs launch at startup, or by `proxy start`),
// found through its health endpoint, stopped cleanly. Its pid file lives in the state dir. Only a
// proxy that proves it holds this install's secret (secret.js) is used or stopped: something
// else answering on the port is reported, never trusted and never signalled.
import { spawn } from "node:child_process";
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
import { installSecret, newChallenge, proves, readSecret, secretPath } from "./secret.js";
import { DEFAULT_PORT } from "./server.js";

const CLI = fileURLToPath(new URL("../cli.js", import.meta.url));

/** The port in force: the option, else CONTEXT_PROXY_PORT, else 4101. */
export function proxyPort(port) {
  const p = Number(port ?? process.env.CONTEXT_PROXY_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(p) || p < 0 || p > 65535)
    throw codedError(
      "E_ARG",
      `the proxy port must be 0–65535, got ${port ?? process.env.CONTEXT_PROXY_PORT}`,
    );
  return p;
}

/** `<state dir>/context/proxy.json` (pid, port, start time) and the proxy's log. */
export function proxyFiles(stateDir) {
  const dir = join(resolveStateDir(stateDir), "context");
  return { dir, pid: join(dir, "proxy.json"), log: join(dir, "proxy.log") };
}

/**
 * What answers `/health` on a port: null when nothing (or not a smarter-compact proxy) does;
 * else its health with `authentic`: whether it proved it holds this install's secret (the one in
 * `stateDir`; false when there is none yet) for a fresh challenge, bound to the port and its pid.
 */
export async function proxyHealth(port, { stateDir } = {}) {
  const secret = readSecret(stateDir);
  const challenge = newChallenge();
  let h;
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health?challenge=${challenge}`, {
      signal: AbortSignal.timeout(1500),
    });
    h = await r.json();
  } catch {
    return null;
  }
  if (h?.service !== "smarter-compact-proxy") return null;
  return { ...h, authentic: secret !== null && proves(h, secret, challenge, port) };
}

function impostor(port, stateDir) {
  return codedError(
    "E_PROXY",
    `something on 127.0.0.1:${port} answers as the smarter-compact proxy but cannot prove it holds this install's secret (${secretPath(stateDir)}): not using it. Stop that process (an older smarter-compact proxy started from this state dir: \`smarter-compact proxy stop\`) or choose another port (--port, CONTEXT_PROXY_PORT)`,
  );
}

/** Starts the proxy in the background unless it already runs; resolves to its health. Throws
 * E_PROXY when something else holds the port, posing as the proxy or not. */
export async function ensureProxy({ stateDir, port } = {}) {
  const p = proxyPort(port);
  const running = await proxyHealth(p, { stateDir });
  if (running?.authentic) return { ...running, started: false };
  if (running) throw impostor(p, stateDir);
  installSecret(stateDir); // before the child starts: both read the same one
  const files = proxyFiles(stateDir);
  mkdirSync(files.dir, { recursive: true });
  const log = openSync(files.log, "a");
  const child = spawn(
    process.execPath,
    [CLI, "proxy", "run", "--port", String(p), ...(stateDir ? ["--state-dir", stateDir] : [])],
    {
      detached: true,
      stdio: ["ignore", log, log],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: "1", BUN_BE_BUN: "1" },
    },
  );
  child.unref();
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const h = await proxyHealth(p, { stateDir });
    if (h?.authentic) return { ...h, started: true };
    if (h && child.exitCode !== null) throw impostor(p, stateDir);
    if (child.exitCode !== null) break;
  }
  throw codedError(
    "E_PROXY",
    `the proxy did not start on 127.0.0.1:${p} (is the port in use? see ${files.log})`,
  );
}

/** Runs the proxy in this process until SIGTERM/SIGINT; writes and removes the pid file. */
export async function runProxy({ stateDir, port, upstreams } = {}) {
  const { startProxy } = await import("./server.js");
  const files = proxyFiles(stateDir);
  const secret = installSecret(stateDir);
  const proxy = await startProxy({ port: proxyPort(port), stateDir, upstreams, secret });
  mkdirSync(files.dir, { recursive: true });
  writeFileSync(
    files.pid,
    JSON.stringify({
      pid: process.pid,
      port: proxy.port,
      started_at: new Date().toISOString(),
      upstreams: proxy.upstreams,
    }),
  );
  const stop = async () => {
    await proxy.close();
    rmSync(files.pid, { force: true });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return proxy;
}

/**
 * Whether `health` comes from a proxy of an older version (before the secret) that this state
 * dir started: no proof at all, the pid its pid file names, and (Linux, where /proc tells) that
 * process runs `cli.js proxy run`. Elsewhere such a proxy is left to the user to stop.
 */
function olderProxy(info, health) {
  if (health.proof !== undefined || !Number.isInteger(info?.pid) || info.pid !== health.pid)
    return false;
  try {
    const argv = readFileSync(`/proc/${info.pid}/cmdline`, "utf8").split("\0");
    const at = argv.findIndex((a) => a.endsWith("cli.js"));
    return at >= 0 && argv[at + 1] === "proxy" && argv[at + 2] === "run";
  } catch {
    return false;
  }
}

/**
 * Stops the background proxy: resolves to "stopped", "not-running", or "foreign" when what
 * answers on the port cannot prove it is this install's proxy (it is left alone). Only the pid
 * that the proxy itself proved is signalled (or, for a proxy older than the secret, the pid its
 * pid file names once /proc shows that process is `cli.js proxy run`).
 */
export async function stopProxy({ stateDir, port } = {}) {
  const files = proxyFiles(stateDir);
  let info = null;
  try {
    info = JSON.parse(readFileSync(files.pid, "utf8"));
  } catch {
    info = null;
  }
  const p = info?.port ?? proxyPort(port);
  const health = await proxyHealth(p, { stateDir });
  if (!health) {
    rmSync(files.pid, { force: true }); // stale: nothing of ours answers
    return "not-running";
  }
  if (!health.authentic && !olderProxy(info, health)) return "foreign";
  process.kill(health.pid, "SIGTERM");
  for (let i = 0; i < 100 && (await proxyHealth(p, { stateDir })); i++)
    await new Promise((r) => setTimeout(r, 100));
  return "stopped";
}
