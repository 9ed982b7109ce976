// The proxy under hostile bodies: decompression bombs and bodies over the cap are refused with a
// 413 before anything is stored; malformed input never reloads the engine; browser-made and
// non-JSON requests are refused; upstream URLs are checked when the proxy starts.
import assert from "node:assert/strict";
import http from "node:http";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import { isTrap } from "../../npm/js/errors.js";
import { startProxy } from "../../npm/js/proxy/server.js";
import { engineModule } from "../../npm/js/wasm.js";
import {
  anthropicBody,
  post,
  storedMessages,
  upstream,
  waitFor,
  withProxy,
} from "./helpers/proxy-rig.mjs";
import { scratchDir } from "./helpers/scratch.mjs";

const CLI = fileURLToPath(new URL("../../npm/js/cli.js", import.meta.url));
const MB = 1024 * 1024;

/** A JSON body whose one user message is `size` bytes of "a": tiny once compressed. */
const bombJson = (size) =>
  Buffer.concat([
    Buffer.from('{"model":"m","messages":[{"role":"user","content":"'),
    Buffer.alloc(size, "a"),
    Buffer.from('"}]}'),
  ]);

const ENCODERS = {
  gzip: (b) => zlib.gzipSync(b, { level: 1 }),
  deflate: (b) => zlib.deflateSync(b, { level: 1 }),
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }),
};

test("decompression bombs (gzip, deflate, br) get a 413 and store nothing", async () => {
  const up = await upstream();
  await withProxy(
    up,
    async (base, _proxy, stateDir) => {
      const headers = { "x-claude-code-session-id": "bomb-1" };
      assert.equal((await post(`${base}/v1/messages`, anthropicBody(2), headers)).status, 200);
      const stored = storedMessages(stateDir);
      assert.equal(stored, 5);
      const forwarded = up.seen.length;
      for (const [encoding, encode] of Object.entries(ENCODERS)) {
        const body = encode(bombJson(8 * MB));
        assert.ok(body.length < 64 * 1024, `${encoding}: ${body.length} bytes on the wire`);
        const r = await post(`${base}/v1/messages`, body, {
          ...headers,
          "content-encoding": encoding,
        });
        assert.equal(r.status, 413, encoding);
        assert.match((await r.json()).error.message, /decompressed.*over.*4194304 bytes/, encoding);
      }
      assert.equal(storedMessages(stateDir), stored, "the stored message count is unchanged");
      assert.equal(up.seen.length, forwarded, "nothing went upstream");
    },
    { maxBodyBytes: 4 * MB },
  );
  await up.close();
});

test("the default cap applies to the decompressed size too", async () => {
  const up = await upstream();
  await withProxy(up, async (base, _proxy, stateDir) => {
    const body = ENCODERS.gzip(bombJson(80 * MB));
    const r = await post(`${base}/v1/messages`, body, { "content-encoding": "gzip" });
    assert.equal(r.status, 413);
    assert.match((await r.json()).error.message, /decompressed/);
    assert.equal(storedMessages(stateDir), 0);
    assert.equal(up.seen.length, 0);
  });
  await up.close();
});

/** Sends headers (and `first` bytes of the body) with node:http, then waits for the answer. */
function partialPost(url, headers, first) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() });
      });
    });
    req.on("error", reject);
    req.write(first);
  });
}

test("a body over the cap gets a 413 without the proxy reading the rest of it", async () => {
  const up = await upstream();
  await withProxy(
    up,
    async (base, _proxy, stateDir) => {
      // Declared too large: refused on the headers, with the body still on its way.
      const declared = await partialPost(
        `${base}/v1/messages`,
        { "content-type": "application/json", "content-length": String(1024 * MB) },
        '{"model":"m","messages":[',
      );
      assert.equal(declared.status, 413);
      assert.match(JSON.parse(declared.body).error.message, /over.*1048576 bytes/);
      // Chunked, no length: refused once the cap is passed, the client still sending.
      const chunked = await partialPost(
        `${base}/v1/messages`,
        { "content-type": "application/json", "transfer-encoding": "chunked" },
        Buffer.alloc(2 * MB, "a"),
      );
      assert.equal(chunked.status, 413);
      // Just under the cap: accepted.
      const fits = anthropicBody(1, "x".repeat(MB - 4096));
      assert.equal((await post(`${base}/v1/messages`, fits)).status, 200);
      assert.equal(up.seen.length, 1, "only the body under the cap went upstream");
      assert.equal(storedMessages(stateDir), 3);
    },
    { maxBodyBytes: MB },
  );
  await up.close();
});

test("bodies in flight together are bounded: past maxBufferedBytes a 503, served again after", async () => {
  const up = await upstream();
  await withProxy(
    up,
    async (base, proxy) => {
      const body = Buffer.from(JSON.stringify(anthropicBody(1, "y".repeat(MB - 8192))));
      // One body half sent: its whole declared length is held for it.
      const first = http.request(`${base}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(body.length) },
      });
      const firstDone = new Promise((resolve, reject) => {
        first.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode));
        });
        first.on("error", reject);
      });
      first.write(body.subarray(0, 1000));
      const busy = await waitFor(async () => {
        const r = await post(`${base}/v1/messages`, body);
        return r.status === 503 ? r : (await r.text(), null);
      });
      assert.ok(busy, "a second body that would pass the budget is refused");
      assert.match((await busy.json()).error.message, /too many large request bodies/);
      first.end(body.subarray(1000));
      assert.equal(await firstDone, 200);
      assert.equal((await post(`${base}/v1/messages`, body)).status, 200, "served once it is done");
      assert.equal(proxy.limits.maxBufferedBytes, 1.5 * MB);
    },
    { maxBodyBytes: MB, maxBufferedBytes: 1.5 * MB },
  );
  await up.close();
});

test("only a real WebAssembly.RuntimeError counts as a trap", () => {
  assert.equal(isTrap(new WebAssembly.RuntimeError("unreachable")), true);
  for (const e of [
    new TypeError("Cannot read properties of undefined (reading 'map')"),
    new RangeError("Invalid array length"),
    new Error("boom"),
    Object.assign(new Error("bad"), { code: "E_MALFORMED" }),
    "a string",
    undefined,
  ])
    assert.equal(isTrap(e), false, String(e));
});

test("malformed Responses input fails open, goes upstream as sent and never reloads the engine", async () => {
  const up = await upstream();
  await withProxy(up, async (base) => {
    const good = {
      model: "gpt-x",
      prompt_cache_key: "bad-input",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
    };
    assert.equal((await post(`${base}/v1/responses`, good)).status, 200);
    const instance = await engineModule();
    const bad = [
      [null],
      [1, "x"],
      [{ type: "message" }],
      [{ type: "message", role: "user", content: 7 }],
      [{ type: "message", role: "user", content: [null, { type: "input_text" }] }],
      [{ type: "function_call_output", output: { a: 1 } }],
      [{ type: "function_call" }],
      [{ type: "reasoning", summary: 5 }],
      [[]],
    ];
    for (let round = 0; round < 30; round++) {
      for (const input of bad) {
        const raw = JSON.stringify({ ...good, input });
        assert.equal((await post(`${base}/v1/responses`, raw)).status, 200);
        assert.equal(up.seen.at(-1).raw.toString(), raw, "forwarded byte for byte");
      }
    }
    assert.equal(await engineModule(), instance, "the same wasm instance throughout");
    const next = { ...good, input: [...good.input, good.input[0]] };
    assert.equal((await post(`${base}/v1/responses`, next)).status, 200);
    assert.equal(await engineModule(), instance);
  });
  await up.close();
});

test("a browser's request (an Origin header) or a non-JSON body is refused and stores nothing", async () => {
  const up = await upstream();
  await withProxy(up, async (base, _proxy, stateDir) => {
    const body = JSON.stringify(anthropicBody(1));
    // What a web page can send cross-site without a preflight: text/plain with its Origin.
    const cross = await post(`${base}/v1/messages`, body, {
      "content-type": "text/plain",
      origin: "https://evil.example",
    });
    assert.equal(cross.status, 403);
    assert.match((await cross.json()).error.message, /browser/);
    const json = await post(`${base}/v1/messages`, body, { origin: "http://127.0.0.1:4101" });
    assert.equal(json.status, 403, "any Origin: the real clients send none");
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const r = await post(`${base}/v1/messages`, body, { "content-type": type });
      assert.equal(r.status, 415, type);
    }
    const none = await new Promise((resolve, reject) => {
      const req = http.request(`${base}/v1/messages`, { method: "POST" }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end(body);
    });
    assert.equal(none, 415, "no content type at all");
    assert.equal(up.seen.length, 0, "nothing went upstream");
    assert.equal(storedMessages(stateDir), 0, "nothing was stored");
    for (const type of ["application/json", "application/json; charset=utf-8"]) {
      const r = await post(`${base}/v1/messages`, body, { "content-type": type });
      assert.equal(r.status, 200, type);
    }
    assert.equal(up.seen.length, 2);
  });
  await up.close();
});

test("upstream URLs are checked when the proxy starts", async () => {
  const stateDir = scratchDir("sc-proxy-");
  for (const bad of ["not a url", "ftp://example.com", "http://", "file:///etc/passwd"]) {
    await assert.rejects(
      startProxy({ port: 0, stateDir, upstreams: { anthropic: bad } }),
      (e) => e.code === "E_CONFIG" && e.message.includes("anthropic upstream"),
      bad,
    );
    await assert.rejects(
      startProxy({ port: 0, stateDir, upstreams: { openai: bad } }),
      (e) => e.code === "E_CONFIG" && e.message.includes("openai upstream"),
      bad,
    );
  }
  const ok = await startProxy({
    port: 0,
    stateDir,
    upstreams: { anthropic: "http://127.0.0.1:9/base", openai: "https://example.com/v1" },
  });
  await ok.close();
  const r = spawnSync(
    process.execPath,
    [CLI, "proxy", "run", "--port", "0", "--state-dir", stateDir, "--anthropic-upstream", "nope"],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.notEqual(r.status, 0);
  assert.equal(r.signal, null, "it exits by itself");
  assert.match(r.stderr, /anthropic upstream.*nope/);
});
