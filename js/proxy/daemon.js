// The proxy as a background process: started on demand (by `enable claude|codex`, by
// `smarter-compact mcp --ensure-proxy` which both CLIs launch at startup, or by `proxy start`),
// found through its health endpoint, stopped cleanly. Its pid file lives in the state dir.
import { spawn } from "node:child_process";
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
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

/** The proxy's health on a port, or null when nothing (or something else) answers. */
export async function proxyHealth(port) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1500) });
    const h = await r.json();
    return h?.service === "smarter-compact-proxy" ? h : null;
  } catch {
    return null;
  }
}

/** Starts the proxy in the background unless it already runs; resolves to its health. */
export async function ensureProxy({ stateDir, port } = {}) {
  const p = proxyPort(port);
  const running = await proxyHealth(p);
  if (running) return { ...running, started: false };
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
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const h = await proxyHealth(p);
    if (h) return { ...h, started: true };
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
  const proxy = await startProxy({ port: proxyPort(port), stateDir, upstreams });
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

/** Stops the background proxy; resolves to whether one was running. */
export async function stopProxy({ stateDir, port } = {}) {
  const files = proxyFiles(stateDir);
  let info = null;
  try {
    info = JSON.parse(readFileSync(files.pid, "utf8"));
  } catch {
    info = null;
  }
  const p = info?.port ?? proxyPort(port);
  const health = await proxyHealth(p);
  const pid = health?.pid ?? info?.pid;
  if (!health || !pid) {
    rmSync(files.pid, { force: true });
    return false;
  }
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 50 && (await proxyHealth(p)); i++)
    await new Promise((r) => setTimeout(r, 100));
  rmSync(files.pid, { force: true });
  return true;
}
