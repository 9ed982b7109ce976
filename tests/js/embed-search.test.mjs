// Search with the embedder on, through the real model in its worker thread: exact identifier
// matches come first through the default `smart_compact_search` (a kv-store session of
// `key_<hex>` records), a search while the worker computes the background backlog answers at
// once from full-text and says so, the query's embedding goes before the backlog, the backlog
// waits while a request is in flight, and the worker runs at the lowest CPU priority.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { after, before, test } from "node:test";
import { createCompactor, runTool } from "../../npm/js/index.js";
import { createEmbedder } from "../../npm/js/embedder.js";
import { scratchDir } from "./helpers/scratch.mjs";

const sessionsDir = new URL("../data/sessions/swe-traj/", import.meta.url);
const WORDS = ["amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor"];
const REGIONS = ["eu-west", "us-east", "ap-south"];

/** A deterministic kv-store session: pages of `PUT key_<hex> rev=N {...}` records read by a
 * tool, most records written on several pages; `latest` maps each key to its latest value. */
function kvSession(pages = 6, perPage = 24) {
  let state = 0x2545f491;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  const hex = (n) => (next() >>> 8).toString(16).padStart(6, "0").slice(0, n);
  const keys = Array.from({ length: 60 }, () => `key_${hex(6)}`);
  const latest = new Map();
  const revs = new Map();
  const messages = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Read the key-value store's write log, then answer questions." },
  ];
  for (let p = 0; p < pages; p++) {
    const lines = [];
    // A key at most once per page: each page is a fresh shuffle of the keys, cut to its size.
    const order = keys.map((k) => [next(), k]).sort((a, b) => a[0] - b[0]);
    for (const [, key] of order.slice(0, perPage)) {
      const rev = (revs.get(key) ?? 0) + 1;
      const value = `${WORDS[(next() >>> 16) % WORDS.length]}-${hex(6)}`;
      revs.set(key, rev);
      latest.set(key, value);
      const rec = { owner: "Ada Byron", region: REGIONS[(next() >>> 16) % 3], quota: 100, value };
      lines.push(`PUT ${key} rev=${rev} ${JSON.stringify(rec)}`);
    }
    const id = `call_read_records_${p}`;
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [
        { id, type: "function", function: { name: "read_records", arguments: `{"page":${p}}` } },
      ],
    });
    messages.push({ role: "tool", tool_call_id: id, content: lines.join("\n") });
  }
  messages.push({ role: "assistant", content: "I have read every page of the write log." });
  return { messages, latest, revs };
}

/** Waits for `cond()` to hold, checking on every turn of the event loop (generous deadline). */
async function until(cond, what, deadlineMs = 120_000) {
  const end = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** The host's priority before the embedder's worker started. */
const hostNice = getPriority(process.pid);
let embedder;
let stateDir;
before(async () => {
  embedder = await createEmbedder();
  stateDir = scratchDir("sc-embed-search-");
});
after(async () => {
  await embedder?.close();
});

test("default smart_compact_search with the embedder on: the record's key finds its record first", async () => {
  const { messages, latest, revs } = kvSession();
  const c = await createCompactor({ sessionId: "kv-hybrid", stateDir, embedder });
  await c.transform(messages, { model: "test", format: "openai" });
  await c.settled();
  let lookups = 0;
  for (const [key, value] of latest) {
    const found = await c.search(key, { limit: 8, scope: "all" });
    assert.equal(found.mode, "hybrid", "the embedder is free and every chunk has its vector");
    assert.equal(found.reason, null);
    assert.ok(
      found.hits[0].snippet.includes(`PUT ${key} `),
      `${key}: first hit ${found.hits[0].snippet}`,
    );
    // The tool's text, as the model reads it: the latest revision's line is among the hits.
    const text = await runTool(c, "smart_compact_search", { query: key, limit: 8, scope: "all" });
    assert.match(text, /hybrid: exact matches first/);
    const line = `PUT ${key} rev=${revs.get(key)} `;
    assert.ok(text.includes(line) && text.includes(`"value":"${value}"`), `${key}: ${text}`);
    lookups++;
  }
  assert.ok(lookups >= 30, `only ${lookups} keys`);
  await c.close();
});

test("a search while the worker computes the backlog answers from full-text and says so", async () => {
  const { messages } = JSON.parse(
    readFileSync(new URL("django__django-11087.json", sessionsDir), "utf8"),
  );
  const c = await createCompactor({ sessionId: "busy", stateDir, embedder });
  await c.transform(messages, { model: "test", format: "openai" });
  await until(() => embedder.busy, "the background round to reach the worker");
  const found = await c.search("django models query", { limit: 5, scope: "all" });
  assert.equal(found.mode, "fts");
  assert.match(found.reason, /busy with the background backlog/);
  assert.match(found.text, /full-text, the embedder is busy with the background backlog/);
  assert.ok(found.hits.length > 0, "full-text still finds the session's words");
  assert.ok(found.coverage.embedded < found.coverage.chunks, "the backlog was not done");
  await c.settled();
  const later = await c.search("django models query", { limit: 5, scope: "all" });
  assert.equal(later.mode, "hybrid");
  assert.equal(later.reason, null);
  await c.close();
});

test("the query goes before the backlog, and the backlog waits while a request is in flight", async () => {
  const texts = Array.from({ length: 12 }, (_, i) => `background text number ${i} about caching`);
  const ended = embedder.beginRequest();
  let backgroundDone = false;
  const background = embedder
    .embed(texts, { priority: "background" })
    .then((v) => ((backgroundDone = true), v));
  const [q] = await embedder.embed(["where is the cache invalidated"], { priority: "query" });
  assert.equal(q.length, 384);
  const [n] = await embedder.embed(["an ordinary call"]);
  assert.equal(n.length, 384);
  // Served twice while the background waited: nothing of it reached the worker.
  assert.equal(backgroundDone, false);
  assert.equal(embedder.busy, false, "the held background is not sent");
  ended();
  ended(); // a second call does nothing
  assert.equal(embedder.busy, true, "released: the background goes to the worker");
  const vecs = await background;
  assert.equal(vecs.length, texts.length);
  await assert.rejects(embedder.embed(["x"], { priority: "toString" }), { code: "E_ARG" });
});

test("the compactor holds the background while its request is in flight", async () => {
  const log = [];
  const spy = {
    info: embedder.info,
    get busy() {
      return embedder.busy;
    },
    embed(texts, opts) {
      log.push(`embed ${opts?.priority}`);
      return embedder.embed(texts, opts);
    },
    beginRequest() {
      log.push("begin");
      const end = embedder.beginRequest();
      return () => {
        log.push("end");
        end();
      };
    },
  };
  const { messages } = kvSession(2, 8);
  const c = await createCompactor({ sessionId: "spy", stateDir, embedder: spy });
  await c.transform(messages.slice(0, 4), { model: "test" }); // the first resolves the embedder
  await c.settled();
  log.length = 0;
  await c.transform(messages, { model: "test" });
  assert.deepEqual(log.slice(0, 2), ["begin", "end"], "begin and end around the request");
  await c.settled();
  assert.ok(
    log.slice(2).length > 0 && log.slice(2).every((l) => l === "embed background"),
    log.join(),
  );
  await c.close();
});

test("without the model files there is no embedder: search is full-text, with nothing to excuse", async () => {
  process.env.SMARTER_COMPACT_MODEL_DIR = scratchDir("sc-no-model-"); // empty
  try {
    const { messages } = kvSession(2, 8);
    const c = await createCompactor({ sessionId: "no-model-default", stateDir });
    await c.transform(messages, { model: "test" });
    await c.settled();
    assert.equal((await c.memoryContext()).embedder, null, "no worker was started");
    const found = await c.search("read_records", { scope: "all" });
    assert.deepEqual([found.mode, found.reason], ["fts", null]);
    assert.match(found.text, /\(full-text\)/);
    await c.close();
  } finally {
    delete process.env.SMARTER_COMPACT_MODEL_DIR;
  }
});

test("the worker runs at the lowest CPU priority, the host's threads at theirs", async (t) => {
  const w = embedder.worker;
  assert.ok(w.wasmBytes > 90e6, `wasm memory ${w.wasmBytes} holds the 90 MB model`);
  if (process.platform !== "linux") {
    t.diagnostic(`no per-thread priority on ${process.platform}`);
    assert.equal(w.nice, null);
    return;
  }
  assert.equal(w.nice, 19);
  const stat = readFileSync(`/proc/${process.pid}/task/${w.tid}/stat`, "utf8");
  assert.equal(
    stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16],
    "19",
    "the kernel says nice 19",
  );
  assert.equal(getPriority(process.pid), hostNice, "the host's main thread keeps its priority");
  console.log(
    `embedder worker: thread ${w.tid} at nice ${w.nice}, wasm memory ${(w.wasmBytes / 2 ** 20).toFixed(0)} MiB`,
  );
});
