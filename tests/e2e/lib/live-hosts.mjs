// Long-lived host processes for tests that watch what reaches the UI layer:
//
//   const oc = await startOpenCodeServer(home, { env });   // `opencode serve` in a setupOpenCodeHome home
//   const sid = await oc.newSession();
//   await oc.prompt(sid, "check the logs");                 // POST /session/:id/message, waits for the answer
//   oc.events                                               // every bus event from GET /event (SSE), in order
//   await oc.close();
//
//   const pi = await startPiRpc(home, { extensionPath, env }); // `pi --mode rpc` in a setupPiHome home
//   await pi.prompt("check the logs");                      // waits until the agent has settled
//   pi.events                                               // every JSON line Pi wrote on stdout
//   await pi.close();
//
// Both kill their whole process group on close; nothing waits on a fixed delay.
import { spawn } from "node:child_process";
import path from "node:path";
import { OPENCODE_ENV, PI_ENV, PROVIDER, hostPaths } from "./hosts.mjs";

const DEADLINE_MS = Number(process.env.E2E_WAIT_MS ?? 120_000);

/** Only what a host needs from the parent environment (as hosts.mjs does). */
function isolatedEnv(home) {
  const env = {};
  for (const k of ["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM", "SHELL"])
    if (process.env[k] != null) env[k] = process.env[k];
  return Object.assign(env, {
    HOME: home.home,
    XDG_CONFIG_HOME: path.join(home.home, ".config"),
    XDG_DATA_HOME: path.join(home.home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home.home, ".cache"),
    XDG_STATE_HOME: path.join(home.home, ".local", "state"),
    NO_COLOR: "1",
    CI: "1",
  });
}

/** Resolves once `check()` returns a truthy value (re-checked on every `poke`), or rejects at
 * the deadline with `what` and the tail of the host's stderr. */
function waiter(stderrTail) {
  const pending = new Set();
  return {
    poke() {
      for (const w of [...pending]) {
        const v = w.check();
        if (v) {
          pending.delete(w);
          clearTimeout(w.timer);
          w.resolve(v);
        }
      }
    },
    until(check, what, ms = DEADLINE_MS) {
      const now = check();
      if (now) return Promise.resolve(now);
      return new Promise((resolve, reject) => {
        const w = { check, resolve };
        w.timer = setTimeout(() => {
          pending.delete(w);
          reject(new Error(`timed out waiting for ${what}; stderr: ${stderrTail().slice(-2000)}`));
        }, ms);
        pending.add(w);
      });
    },
  };
}

function spawnGroup(cmd, args, { cwd, env }) {
  const child = spawn(cmd, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.on("error", () => {});
  const exited = new Promise((resolve) => child.on("close", resolve));
  const kill = async () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group has already exited
    }
    await exited;
  };
  return { child, stderr: () => stderr, kill, exited };
}

/** Splits a stream into lines and hands each to `onLine`. */
function lines(stream, onLine) {
  let buf = "";
  stream.setEncoding("utf8");
  stream.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}

// ---- OpenCode ---------------------------------------------------------------------------------

/**
 * `opencode serve` on a free loopback port in a home from setupOpenCodeHome, with the bus events
 * of GET /event recorded as they come. The API routes used are OpenCode 1.18's v1 routes.
 */
export async function startOpenCodeServer(home, { env = {} } = {}) {
  const proc = spawnGroup(
    hostPaths().opencode,
    ["serve", "--port", "0", "--hostname", "127.0.0.1"],
    { cwd: home.proj, env: { ...isolatedEnv(home), ...OPENCODE_ENV, ...env } },
  );
  const wait = waiter(proc.stderr);
  let url = null;
  lines(proc.child.stdout, (line) => {
    const m = /listening on (http:\/\/\S+)/.exec(line);
    if (m) url = m[1];
    wait.poke();
  });
  proc.exited.then(() => wait.poke());
  try {
    await wait.until(() => url || proc.child.exitCode !== null, "opencode serve to listen");
    if (!url) throw new Error(`opencode serve exited: ${proc.stderr().slice(-2000)}`);
  } catch (e) {
    await proc.kill();
    throw e;
  }

  const events = [];
  const sse = new AbortController();
  const connected = (async () => {
    const res = await fetch(`${url}/event`, { signal: sse.signal });
    const decoder = new TextDecoder();
    let buf = "";
    (async () => {
      try {
        for await (const chunk of res.body) {
          buf += decoder.decode(chunk, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = frame
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trim())
              .join("\n");
            if (!data) continue;
            try {
              events.push(JSON.parse(data));
            } catch {
              // not a JSON frame
            }
            wait.poke();
          }
        }
      } catch {
        // aborted on close
      }
    })();
  })();
  await connected;
  await wait.until(() => events.length > 0, "the first event of GET /event");

  async function api(method, route, body) {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : null;
  }
  const [providerID, modelID] = [PROVIDER, home.model.slice(PROVIDER.length + 1)];
  return {
    url,
    events,
    api,
    stderr: proc.stderr,
    until: wait.until,
    /** A new session's id. */
    async newSession() {
      return (await api("POST", "/session", {})).id;
    },
    /** One user turn; resolves with the final assistant message once the loop has finished. */
    prompt(sessionID, text) {
      return api("POST", `/session/${sessionID}/message`, {
        model: { providerID, modelID },
        parts: [{ type: "text", text }],
      });
    },
    /** A slash command (`/name args`) as the TUI runs it. */
    command(sessionID, command, args = "") {
      return api("POST", `/session/${sessionID}/command`, {
        command,
        arguments: args,
        model: `${providerID}/${modelID}`,
      });
    },
    /** OpenCode's own compaction, as `/compact` asks for it. */
    summarize(sessionID) {
      return api("POST", `/session/${sessionID}/summarize`, { providerID, modelID });
    },
    /** Every message of a session with its parts. */
    messages(sessionID) {
      return api("GET", `/session/${sessionID}/message`);
    },
    async close() {
      sse.abort();
      await proc.kill();
    },
  };
}

// ---- Pi ---------------------------------------------------------------------------------------

/**
 * `pi --mode rpc` in a home from setupPiHome, with the session kept in home.sessionDir and the
 * extension (if any) loaded with -e. Pi 1.x ends each prompt with `agent_settled`; Pi 0.73 (`legacy`)
 * with `agent_end`, after which the test polls get_state until nothing runs.
 */
export async function startPiRpc(home, { extensionPath, env = {}, legacy = false } = {}) {
  const paths = hostPaths();
  const [node, cli] = legacy ? [paths.node20, paths.piLegacy] : [paths.node22, paths.pi];
  const args = [cli, "--mode", "rpc", "--model", home.model, "--no-extensions", "--no-skills"];
  args.push("--no-prompt-templates", "--no-themes", "--no-context-files");
  args.push("--session-dir", home.sessionDir);
  if (extensionPath) args.push("-e", path.resolve(extensionPath));
  const proc = spawnGroup(node, args, {
    cwd: home.proj,
    env: { ...isolatedEnv(home), ...PI_ENV, PI_CODING_AGENT_DIR: home.agentDir, ...env },
  });
  const wait = waiter(proc.stderr);
  const events = [];
  lines(proc.child.stdout, (line) => {
    if (!line.trim().startsWith("{")) return;
    try {
      events.push(JSON.parse(line));
    } catch {
      return; // not a record
    }
    wait.poke();
  });
  proc.exited.then(() => wait.poke());
  let seq = 0;
  async function send(command) {
    const id = `t${++seq}`;
    proc.child.stdin.write(JSON.stringify({ ...command, id }) + "\n");
    const res = await wait.until(
      () =>
        events.find((e) => e.type === "response" && e.id === id) ||
        (proc.child.exitCode !== null && { success: false, error: "pi exited" }),
      `the response to ${command.type}`,
    );
    if (!res.success) throw new Error(`${command.type}: ${res.error}`);
    return res.data;
  }
  const settledCount = () =>
    events.filter((e) => e.type === (legacy ? "agent_end" : "agent_settled")).length;
  return {
    events,
    send,
    stderr: proc.stderr,
    until: wait.until,
    /** One user turn (or slash command); resolves once the agent has settled. */
    async prompt(message) {
      const before = settledCount();
      await send({ type: "prompt", message });
      await wait.until(() => settledCount() > before, `the end of the turn "${message}"`);
    },
    /** A slash command handled by an extension: resolves once `done(events)` holds. */
    async command(message, done) {
      await send({ type: "prompt", message });
      await wait.until(() => done(events), `the effect of ${message}`);
    },
    async close() {
      proc.child.stdin.end();
      await proc.kill();
    },
  };
}
