// The proxy's limits: a bounded number of open session stores, backpressure towards a client that
// does not read, an upstream timeout, a connection cap and timeouts for slow request headers.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import net from "node:net";
import { test } from "node:test";
import {
  anthropicBody,
  post,
  storedMessages,
  upstream,
  waitFor,
  withProxy,
} from "./helpers/proxy-rig.mjs";
import { openSessions } from "../../npm/js/proxy/open-sessions.js";

/** File descriptors of this process open on files under `dir` (null where /proc is missing). */
function fdsUnder(dir) {
  if (!existsSync("/proc/self/fd")) return null;
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir)) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

test("at most maxSessions stores stay open; a closed one opens again and goes on", async () => {
  const up = await upstream();
  await withProxy(
    up,
    async (base, proxy, stateDir) => {
      const send = async (k, turns) => {
        const r = await post(`${base}/v1/messages`, anthropicBody(turns, `task ${k}`), {
          "x-claude-code-session-id": `lru-${k}`,
        });
        assert.equal(r.status, 200);
        await r.text();
      };
      for (let k = 0; k < 12; k++) await send(k, 2);
      const health = await (await fetch(`${base}/health`)).json();
      assert.equal(health.sessions, 12, "twelve sessions seen");
      assert.ok(health.open_sessions <= 3, `${health.open_sessions} stores open`);
      assert.ok(health.engine_memory_bytes >= 65536, "the engine's memory is reported");
      const fds = fdsUnder(stateDir);
      if (fds !== null) assert.ok(fds <= 3 * 3, `${fds} descriptors open under the state dir`);
      // Session 0 was closed long ago: its next request reopens the store and adds to it.
      await send(0, 3);
      assert.equal(
        storedMessages(stateDir),
        12 * 5 + 2,
        "the two new messages of session 0 stored",
      );
      assert.equal(proxy.stats.fail_opens, 0);
    },
    { maxSessions: 3 },
  );
  await up.close();
});

test("a client that does not read its answer: the upstream is paused, not drained into memory", async () => {
  const total = 256 * 1024 * 1024;
  let written = 0;
  let finished = false;
  const up = await upstream((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = Buffer.alloc(1024 * 1024, "d");
    const more = () => {
      while (written < total) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      finished = true;
      res.end();
    };
    more();
  });
  await withProxy(up, async (base) => {
    const port = new URL(base).port;
    const sock = net.connect(Number(port), "127.0.0.1");
    await new Promise((r) => sock.once("connect", r));
    const body = JSON.stringify(anthropicBody(1));
    sock.write(
      `POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    sock.pause(); // and never read
    // Wait until the upstream either sent everything (the proxy drained it) or made no progress
    // for a while (it is held back); only the first can happen without backpressure.
    let last = -1;
    let still = 0;
    await waitFor(() => {
      if (finished) return true;
      still = written === last ? still + 1 : 0;
      last = written;
      return written > 0 && still >= 50;
    }, 120_000);
    assert.equal(finished, false, "the upstream could not send the whole answer");
    assert.ok(written < 64 * 1024 * 1024, `${written} bytes left the upstream`);
    sock.destroy();
  });
  await up.close();
});

test("an upstream that never answers: a 504 after upstreamTimeoutMs", async () => {
  const up = await upstream(() => {}); // reads the request, never answers
  await withProxy(
    up,
    async (base) => {
      const r = await fetch(`${base}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(anthropicBody(1)),
        signal: AbortSignal.timeout(60_000),
      });
      assert.equal(r.status, 504);
      assert.match((await r.json()).error.message, /sent nothing for 300 ms/);
    },
    { upstreamTimeoutMs: 300 },
  );
  await up.close();
});

/** Opens a raw connection; resolves to what the server sent before closing it (or `deadline`). */
function rawExchange(port, text, deadline = 60_000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    const got = [];
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ closed: false, data: Buffer.concat(got).toString() });
    }, deadline);
    sock.on("data", (c) => got.push(c));
    sock.on("error", () => {}); // a reset is a close here
    sock.on("close", () => {
      clearTimeout(timer);
      resolve({ closed: true, data: Buffer.concat(got).toString() });
    });
    sock.on("connect", () => sock.write(text));
    sock.on("error", reject);
  });
}

test("connections beyond maxConnections are dropped", async () => {
  const up = await upstream();
  await withProxy(
    up,
    async (base, proxy) => {
      const held = [];
      for (let i = 0; i < 2; i++) {
        const s = net.connect(proxy.port, "127.0.0.1");
        await new Promise((r) => s.once("connect", r));
        held.push(s);
      }
      const third = await rawExchange(
        proxy.port,
        "GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      );
      assert.equal(third.closed, true);
      assert.doesNotMatch(third.data, /200 OK/, "the third connection got no answer");
      for (const s of held) s.destroy();
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok, 30_000);
      assert.equal((await fetch(`${base}/health`)).status, 200, "served again once they closed");
    },
    { maxConnections: 2 },
  );
  await up.close();
});

test("request headers that never finish get a 408 after headersTimeoutMs", async () => {
  const up = await upstream();
  await withProxy(
    up,
    async (_base, proxy) => {
      const slow = await rawExchange(proxy.port, "POST /v1/messages HTTP/1.1\r\nhost: x\r\n");
      assert.equal(slow.closed, true, "the proxy closed the connection");
      assert.match(slow.data, /^HTTP\/1\.1 408/);
      assert.equal(up.seen.length, 0);
    },
    { headersTimeoutMs: 500, requestTimeoutMs: 1000 },
  );
  await up.close();
});

test("an open session in use by a request is never closed under it", async () => {
  const closed = [];
  const lru = openSessions({
    max: 1,
    open: async (id) => ({ id }),
    close: async (v) => void closed.push(v.id),
  });
  const a = await lru.lease("a");
  const b = await lru.lease("b");
  assert.deepEqual(closed, [], "both in use: over the cap for now");
  assert.equal(lru.size, 2);
  a.release();
  await waitFor(() => closed.length === 1);
  assert.deepEqual(closed, ["a"], "the idle, least recently used one is closed");
  b.release();
  const again = await lru.lease("a");
  assert.equal(again.value.id, "a", "opened again");
  again.release();
  await waitFor(() => closed.length === 2);
  assert.deepEqual(closed, ["a", "b"]);
  await lru.closeAll();
  assert.deepEqual(closed, ["a", "b", "a"]);
});
