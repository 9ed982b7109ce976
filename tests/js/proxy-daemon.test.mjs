// The background proxy and what may pose as it: only a proxy proving this install's secret on
// /health is used or stopped; a squatter on the port is reported and never signalled.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureProxy, proxyFiles, proxyHealth, stopProxy } from "../../npm/js/proxy/daemon.js";
import { waitFor } from "./helpers/proxy-rig.mjs";
import { scratchDir } from "./helpers/scratch.mjs";

const CLI = fileURLToPath(new URL("../../npm/js/cli.js", import.meta.url));
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Runs the CLI without blocking this process: `{ status, stdout, stderr }`. */
function runCli(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (c) => (stdout += c));
    p.stderr.on("data", (c) => (stderr += c));
    p.on("error", reject);
    p.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** A process that only sleeps, and an HTTP server answering /health as the proxy would, naming
 * that process's pid: what `proxy stop` must not be fooled by. */
async function squatter() {
  const victim = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e9)"], { stdio: "ignore" });
  await new Promise((r) => victim.once("spawn", r));
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        ok: true,
        service: "smarter-compact-proxy",
        pid: victim.pid,
        port: srv.address().port,
        proof: "00".repeat(32),
      }),
    );
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return {
    victim,
    port: srv.address().port,
    close: async () => {
      victim.kill("SIGKILL");
      await new Promise((r) => srv.close(r));
    },
  };
}

test("proxy stop leaves alone a process that a fake health answer names", async () => {
  const stateDir = scratchDir("sc-daemon-");
  const sq = await squatter();
  try {
    // Even a pid file naming the victim (stale, or planted) does not make it a target.
    const files = proxyFiles(stateDir);
    mkdirSync(files.dir, { recursive: true });
    writeFileSync(files.pid, JSON.stringify({ pid: sq.victim.pid, port: sq.port }));
    assert.equal(await stopProxy({ stateDir, port: sq.port }), "foreign");
    // Not spawnSync: the squatter answers from this process's event loop.
    const cli = await runCli(["proxy", "stop", "--port", String(sq.port), "--state-dir", stateDir]);
    assert.equal(cli.status, 1, cli.stderr);
    assert.match(cli.stdout, /without this install's secret: left alone/);
    assert.equal(alive(sq.victim.pid), true, "the process the fake named is still running");
    assert.equal(sq.victim.exitCode, null);
  } finally {
    await sq.close();
  }
});

test("ensureProxy refuses a squatter that answers /health as the proxy", async () => {
  const stateDir = scratchDir("sc-daemon-");
  const sq = await squatter();
  try {
    await assert.rejects(ensureProxy({ stateDir, port: sq.port }), (e) => {
      assert.equal(e.code, "E_PROXY");
      assert.match(e.message, /cannot prove it holds this install's secret/);
      return true;
    });
    const h = await proxyHealth(sq.port, { stateDir });
    assert.equal(h.authentic, false);
  } finally {
    await sq.close();
  }
});

test("the proxy started by the CLI proves the secret (a 0600 file), is found and stopped", async () => {
  const stateDir = scratchDir("sc-daemon-");
  const port = await new Promise((resolve) => {
    const s = http.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const start = spawnSync(
    process.execPath,
    [CLI, "proxy", "start", "--port", String(port), "--state-dir", stateDir],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(start.status, 0, start.stderr);
  const pid = Number(/pid (\d+)/.exec(start.stdout)[1]);
  try {
    if (process.platform !== "win32")
      assert.equal(statSync(join(stateDir, "context", "proxy.secret")).mode & 0o777, 0o600);
    const h = await proxyHealth(port, { stateDir });
    assert.equal(h.authentic, true);
    assert.equal(h.pid, pid);
    assert.equal((await ensureProxy({ stateDir, port })).started, false, "found, not restarted");
    // Another install (another state dir, another secret) does not take it for its own.
    const other = scratchDir("sc-daemon-");
    writeFileSync(join(other, "placeholder"), "");
    await assert.rejects(ensureProxy({ stateDir: other, port }), { code: "E_PROXY" });
    assert.equal(await stopProxy({ stateDir: other, port }), "foreign");
    assert.equal(alive(pid), true);
    assert.equal(await stopProxy({ stateDir, port }), "stopped");
    assert.ok(await waitFor(() => !alive(pid), 30_000), "the proxy exited");
  } finally {
    if (alive(pid)) process.kill(pid, "SIGKILL");
  }
});

test("a proxy older than the secret, named by this state dir's pid file, can still be stopped", async () => {
  const stateDir = scratchDir("sc-daemon-");
  // Stands in for the previous version: `cli.js proxy run` answering /health with no proof.
  const fake = join(scratchDir("sc-old-"), "cli.js");
  writeFileSync(
    fake,
    `const http = require("node:http");
     const srv = http.createServer((q, s) => s.end(JSON.stringify({ ok: true, service: "smarter-compact-proxy", pid: process.pid })));
     srv.listen(0, "127.0.0.1", () => console.log(srv.address().port));
     process.on("SIGTERM", () => process.exit(0));`,
  );
  const old = spawn(process.execPath, [fake, "proxy", "run"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  try {
    const port = Number(await new Promise((r) => old.stdout.once("data", (d) => r(String(d)))));
    const files = proxyFiles(stateDir);
    mkdirSync(files.dir, { recursive: true });
    writeFileSync(files.pid, JSON.stringify({ pid: old.pid, port }));
    await assert.rejects(ensureProxy({ stateDir, port }), { code: "E_PROXY" });
    if (!existsSync("/proc/self/cmdline")) {
      // Without /proc the process cannot be identified: left to the user.
      assert.equal(await stopProxy({ stateDir, port }), "foreign");
      return;
    }
    assert.equal(await stopProxy({ stateDir, port }), "stopped");
    assert.ok(await waitFor(() => old.exitCode !== null, 30_000), "it exited");
  } finally {
    if (old.exitCode === null) old.kill("SIGKILL");
  }
});
