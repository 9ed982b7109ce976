// Hybrid search against full-text search alone on real sessions, with the real model in its worker
// thread: a paraphrase probe set. Each probe is the agent's own THOUGHT text about a tool output
// (the assistant message right after it) with every word it shares with that output's rare words
// removed, so the query describes the output without its rare tokens. The target is the output's
// message; a probe's rank counts tool outputs only (the THOUGHT message itself holds the query
// verbatim). The sessions are ingested through the compactor and embedded in the background, as a
// host would run it; the host's event loop is measured while that backlog is embedded.
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { createHistogram } from "node:perf_hooks";
import { after, before, test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { createEmbedder } from "../../npm/js/embedder.js";
import { scratchDir } from "./helpers/scratch.mjs";

const SESSIONS = ["django__django-11299", "sphinx-doc__sphinx-10449", "sympy__sympy-13974"];
const sessionsDir = new URL("../data/sessions/swe-traj/", import.meta.url);
/** A word shared with the target is dropped when at most this many messages of the session hold it. */
const RARE_DF = 3;
const QUERY_WORDS = 40;
const DEPTH = 50;

const wordsOf = (text) => text.toLowerCase().match(/[a-z0-9_]+/g) ?? [];

/** The probes of one session: `{query, target}` with `target` the index of the tool output. */
function probes(messages) {
  const df = new Map();
  for (const m of messages)
    for (const w of new Set(wordsOf(m.content))) df.set(w, (df.get(w) ?? 0) + 1);
  const out = [];
  for (let i = 2; i + 1 < messages.length; i++) {
    const [obs, next] = [messages[i], messages[i + 1]];
    if (obs.role !== "user" || next.role !== "assistant" || !next.content.startsWith("THOUGHT:"))
      continue;
    const prose = next.content.slice("THOUGHT:".length).split("```")[0];
    const shared = new Set(wordsOf(obs.content));
    const kept = (prose.match(/\S+/g) ?? [])
      .filter((tok) => !wordsOf(tok).some((w) => shared.has(w) && df.get(w) <= RARE_DF))
      .slice(0, QUERY_WORDS);
    if (kept.length >= 5) out.push({ query: kept.join(" "), target: i });
  }
  return out;
}

/** 1/rank of the target among the tool-output messages hit (0 when it is not in the first DEPTH). */
function reciprocalRank(hits, seqOfTarget, outputSeqs) {
  const seen = [];
  for (const h of hits) if (outputSeqs.has(h.seq) && !seen.includes(h.seq)) seen.push(h.seq);
  const r = seen.indexOf(seqOfTarget);
  return r < 0 ? 0 : 1 / (r + 1);
}

let embedder;
let stateDir;
before(async () => {
  embedder = await createEmbedder();
  stateDir = scratchDir("sc-probe-");
});
after(async () => {
  await embedder?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

test("paraphrase probes: hybrid search beats full-text search in MRR on real sessions", async () => {
  const mrr = { fts: 0, hybrid: 0 };
  let count = 0;
  let embedded = 0;
  // Gaps between the ticks of a 10 ms timer while the background rounds run, in µs.
  const delay = createHistogram();
  let busyMs = 0;
  for (const name of SESSIONS) {
    const { messages } = JSON.parse(readFileSync(new URL(`${name}.json`, sessionsDir), "utf8"));
    const c = await createCompactor({
      sessionId: name,
      stateDir,
      sqlite: "better-sqlite3",
      embedder,
    });
    await c.transform(messages, { model: "test", format: "openai" });
    // The backlog of the whole session is embedded in the background while the loop is watched.
    const started = performance.now();
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      delay.record(Math.max(1, Math.round((now - last) * 1000)));
      last = now;
    }, 10);
    await c.settled();
    clearInterval(ticker);
    busyMs += performance.now() - started;
    const { rows } = await c.sql("SELECT seq, role, text FROM messages ORDER BY seq");
    const seqOf = new Map(
      rows.filter(([, role]) => role === "user").map(([seq, , text]) => [text, seq]),
    );
    const outputSeqs = new Set(seqOf.values());
    const { rows: cov } = await c.sql(
      "SELECT count(*) FROM chunks JOIN vectors USING (hash) WHERE vec IS NOT NULL",
    );
    embedded += cov[0][0];
    for (const p of probes(messages)) {
      const target = seqOf.get(messages[p.target].content);
      assert.ok(target !== undefined, `${name}: message ${p.target} is in the store`);
      const fts = await c.search(p.query, { limit: DEPTH, scope: "all", mode: "fts" });
      const hybrid = await c.search(p.query, { limit: DEPTH, scope: "all", mode: "hybrid" });
      assert.equal(hybrid.mode, "hybrid", `${name}: vectors exist after the background round`);
      mrr.fts += reciprocalRank(fts.hits, target, outputSeqs);
      mrr.hybrid += reciprocalRank(hybrid.hits, target, outputSeqs);
      count++;
    }
    await c.close();
  }
  mrr.fts /= count;
  mrr.hybrid /= count;
  const ms = (us) => (us / 1e3).toFixed(1);
  console.log(
    `paraphrase probes: ${count} over ${SESSIONS.length} sessions; MRR fts ${mrr.fts.toFixed(3)}, hybrid ${mrr.hybrid.toFixed(3)}; ` +
      `background embedding of ${embedded} chunks took ${(busyMs / 1000).toFixed(1)} s, host event-loop delay ` +
      `p50 ${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))} ms, max ${ms(delay.max)} ms (gaps between 10 ms timer ticks)`,
  );
  assert.ok(delay.count > 0, "the timer never ticked");
  assert.ok(count >= 100, `only ${count} probes`);
  assert.ok(embedded >= 200, `only ${embedded} chunks embedded in the background`);
  assert.ok(mrr.hybrid > mrr.fts, `hybrid MRR ${mrr.hybrid} <= fts MRR ${mrr.fts}`);
});
