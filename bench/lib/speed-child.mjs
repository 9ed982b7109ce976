// Speed and scale measurements, one job per child process (so each runtime and backend is
// measured in its own process): `node|bun speed-child.mjs <job> <json options>`; prints JSON.
//   hook    hook time per request ÷ one JSON.stringify of the same request, at several sizes
//   ingest  ingest rate of the selected backend (SMARTER_COMPACT_SQLITE), with a raw INSERT of
//           the same texts as the reference, and search latency at N output lines
//   rss     peak RSS while a session grows to N messages (or, with bare, without the engine)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCompactor, openSqlite } from "../../npm/js/index.js";
import { engineModule, instanceExports } from "../../npm/js/wasm.js";
import { quantile } from "./stats.mjs";
import { SPEED } from "./speed-params.mjs";
import { codingSession, logRows } from "./synth.mjs";
import { sessionInFormat } from "./synth-formats.mjs";

const [job, arg] = process.argv.slice(2);
const opts = JSON.parse(arg ?? "{}");
const now = () => performance.now();
const dirs = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "scb-speed-"));
  dirs.push(d);
  return d;
};
const NEW = SPEED.newPerRequest;
const pct = (xs) => ({ p50: quantile(xs, 0.5), p95: quantile(xs, 0.95), n: xs.length });

async function hook() {
  const out = [];
  for (const format of opts.formats ?? ["openai"])
    for (const n of opts.sizes) {
      const openai = codingSession(n, 7);
      const s = sessionInFormat(openai, format);
      const c = await createCompactor({
        sessionId: `hook-${format}-${n}`,
        stateDir: tmp(),
        embedder: false,
      });
      const K = opts.steady;
      const start = Math.max(NEW, n - NEW * K);
      // the session up to `start` arrives first (bulk ingest, not timed), then K requests of NEW new messages
      await c.transform(s.at(start), { model: opts.model, format });
      const hookMs = [];
      const idleMs = [];
      const strMs = [];
      const ratio = [];
      let trims = 0;
      const serialisedBefore = c.serialisedMessages;
      for (let k = start + NEW; k <= n; k += NEW) {
        // With `copies`, every request is a deep copy, as OpenCode (which reads its messages
        // back from its database) and Pi (which hands the hook a copy) pass them; not timed.
        const req = opts.copies ? structuredClone(s.at(k)) : s.at(k);
        let a = now();
        JSON.stringify(req);
        const st = now() - a;
        a = now();
        const r = await c.transform(req, { model: opts.model, format });
        const h = now() - a;
        // The host awaits the model between requests: the event loop turns, and the check of
        // the history taken as unchanged runs then (timed apart: CPU, not latency).
        a = now();
        await new Promise(setImmediate);
        idleMs.push(now() - a);
        if (r.stats.fail_open) throw new Error(`fail-open at ${n}: ${r.stats.error?.message}`);
        if (r.stats.trimmed) trims++;
        hookMs.push(h);
        strMs.push(st);
        ratio.push(h / st);
      }
      out.push({
        format,
        copies: Boolean(opts.copies),
        messages: n,
        items: s.at(n).length,
        bytes: JSON.stringify(s.at(n)).length,
        hook: pct(hookMs),
        idleCheck: pct(idleMs),
        stringify: pct(strMs),
        ratio: pct(ratio),
        trims,
        serialisedPerRequest: (c.serialisedMessages - serialisedBefore) / hookMs.length,
        backend: (await c.status()).store.backend,
      });
      await c.close();
    }
  return out;
}

async function ingest() {
  const backend = process.env.SMARTER_COMPACT_SQLITE;
  const res = {
    backend,
    runtime: globalThis.Bun ? `bun ${Bun.version}` : `node ${process.versions.node}`,
  };
  // bulk: one request with M new messages (one transaction)
  const s = codingSession(opts.messages + NEW, 9);
  const bytes = JSON.stringify(s).length;
  let c = await createCompactor({
    sessionId: "ingest",
    stateDir: tmp(),
    embedder: false,
    sqlite: backend,
  });
  let a = now();
  const r = await c.transform(s, { model: opts.model, format: "openai" });
  const bulkMs = now() - a;
  if (r.stats.fail_open) throw new Error(r.stats.error?.message);
  await c.close();
  // reference: the same message texts inserted raw, one transaction, same backend
  const d = tmp();
  const db = await openSqlite({ path: join(d, "raw.db"), backend });
  db.exec("CREATE TABLE t(role TEXT, text TEXT)", []);
  a = now();
  db.exec("BEGIN", []);
  for (const m of s)
    db.exec("INSERT INTO t(role, text) VALUES (?, ?)", [
      m.role,
      typeof m.content === "string" ? m.content : JSON.stringify(m.content),
    ]);
  db.exec("COMMIT", []);
  const rawMs = now() - a;
  // second reference: every line of every message into a plain FTS4 table (what a line index costs)
  db.exec("CREATE VIRTUAL TABLE f USING fts4(text)", []);
  a = now();
  db.exec("BEGIN", []);
  for (const m of s)
    for (const line of String(
      typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""),
    ).split("\n"))
      db.exec("INSERT INTO f(text) VALUES (?)", [line]);
  db.exec("COMMIT", []);
  const rawFtsMs = now() - a;
  db.close?.();
  // incremental: requests of NEW new messages each, as an agent loop sends them
  c = await createCompactor({
    sessionId: "incr",
    stateDir: tmp(),
    embedder: false,
    sqlite: backend,
  });
  const inc = Math.min(SPEED.maxIncremental, Math.floor(opts.messages / 4));
  await c.transform(s.slice(0, s.length - NEW * inc), { model: opts.model, format: "openai" });
  const per = [];
  for (let k = s.length - NEW * inc + NEW; k <= s.length; k += NEW) {
    a = now();
    await c.transform(s.slice(0, k), { model: opts.model, format: "openai" });
    per.push(now() - a);
  }
  await c.close();
  Object.assign(res, {
    messages: s.length,
    bytes,
    bulkMs,
    rawMs,
    bulkMsgPerS: s.length / (bulkMs / 1000),
    mbPerS: bytes / 1e6 / (bulkMs / 1000),
    rawFtsMs,
    overRaw: bulkMs / rawMs,
    overRawFts: bulkMs / (rawMs + rawFtsMs),
    incremental: pct(per),
  });
  // search latency at N output lines
  res.search = [];
  for (const rows of opts.searchRows) {
    const L = logRows(rows, SPEED.linesPerOutput, 13);
    const dir = tmp();
    c = await createCompactor({
      sessionId: "search",
      stateDir: dir,
      embedder: false,
      sqlite: backend,
    });
    a = now();
    for (let k = 2; k < L.length; k += 200)
      await c.transform(L.slice(0, Math.min(L.length, k + 200)), {
        model: opts.model,
        format: "openai",
      });
    const buildMs = now() - a;
    const ids = [];
    const words = [];
    for (let i = 0; i < SPEED.idLookups; i++) {
      const id = `L${String(Math.floor((i * 7919) % rows)).padStart(6, "0")}`;
      a = now();
      const h = await c.search(id, { limit: 8, scope: "all" });
      ids.push(now() - a);
      if (!h.hits.some((x) => x.snippet?.includes(id))) throw new Error(`search missed ${id}`);
    }
    for (const q of SPEED.wordQueries) {
      a = now();
      await c.search(q, { limit: 8, scope: "all" });
      words.push(now() - a);
    }
    await c.close();
    // reference: a LIKE scan of the same table on the same backend
    const ro = await openSqlite({
      path: join(dir, "context", "sessions", "search.db"),
      backend,
      readonly: true,
    });
    const scan = [];
    for (let i = 0; i < SPEED.likeScans; i++) {
      const id = `L${String((i * 7919) % rows).padStart(6, "0")}`;
      a = now();
      ro.query("SELECT seq, line_no FROM output_lines WHERE text LIKE ? LIMIT 8", [`%${id}%`]);
      scan.push(now() - a);
    }
    ro.close?.();
    res.search.push({ rows, buildMs, id: pct(ids), words: pct(words), likeScan: pct(scan) });
  }
  return res;
}

/** JSON size of a message list without building its whole JSON text (which would raise the
 * peak RSS being measured). */
const jsonBytes = (msgs) => msgs.reduce((n, m) => n + JSON.stringify(m).length + 1, 1);

async function rss() {
  const n = opts.messages;
  const extra = NEW * SPEED.steadyAtFull;
  // one session, grown to n and then by NEW per steady request (the host's own objects)
  const s = codingSession(n + extra, 5, opts.scale ?? 1);
  const res = { messages: n, bytes: jsonBytes(s.slice(0, n)), bare: !!opts.bare };
  res.baselineRssMB = process.memoryUsage().rss / 2 ** 20;
  if (!opts.bare) {
    const c = await createCompactor({ sessionId: "rss", stateDir: tmp(), embedder: false });
    const chunk = opts.chunk;
    const times = [];
    for (let k = Math.min(chunk, n); ; k = Math.min(n, k + chunk)) {
      const a = now();
      const r = await c.transform(s.slice(0, k), { model: opts.model, format: "openai" });
      times.push({ messages: k, ms: now() - a });
      if (r.stats.fail_open) throw new Error(r.stats.error?.message);
      if (k === n) break;
    }
    // steady state at full length: NEW new messages per request
    const steady = [];
    for (let k = n + NEW; k <= n + extra; k += NEW) {
      const req = s.slice(0, k);
      const a = now();
      await c.transform(req, { model: opts.model, format: "openai" });
      steady.push(now() - a);
    }
    res.chunks = times;
    res.steady = pct(steady);
    res.afterRssMB = process.memoryUsage().rss / 2 ** 20;
    // the engine's linear memory: its high-water mark (a wasm memory never shrinks)
    res.wasmMemoryMB = instanceExports(await engineModule()).memory.buffer.byteLength / 2 ** 20;
    await c.close();
  }
  // the peak so far, before the reference below builds whole JSON texts
  res.maxRssMB = process.resourceUsage().maxRSS / 1024;
  if (!opts.bare) {
    const str = [];
    for (let k = n + NEW; k <= n + extra; k += NEW) {
      const a = now();
      JSON.stringify(s.slice(0, k));
      str.push(now() - a);
    }
    res.steadyStringify = pct(str);
  }
  return res;
}

try {
  const jobs = { hook, ingest, rss };
  const result = await jobs[job]();
  process.stdout.write(JSON.stringify(result));
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
