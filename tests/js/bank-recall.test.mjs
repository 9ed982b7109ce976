// Cuts teach the memory bank, and a later session of the same repository recalls it: two real
// sessions replayed one after another through one bank with recall on trim.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import {
  BANK_BEGIN,
  bankSection,
  namesIn,
  recallMemories,
  spliceSection,
} from "../../bench/lib/bank-measure.mjs";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { openSqlite } from "../../npm/js/shims/index.js";
import { scratchDir } from "./helpers/scratch.mjs";

const DIR = new URL("../data/sessions/swe-traj/", import.meta.url).pathname;
const config = { trimAtTokens: 8000, memoryBank: "django", compactionRecall: true };

/** Replays a session; returns the recall memories of each request that carried a block. */
async function replay(stateDir, file) {
  const s = loadSession(join(DIR, file));
  const c = await createCompactor({ sessionId: s.id, stateDir, embedder: false, config });
  const blocks = [];
  let cuts = 0;
  try {
    for (const req of requests(s.history)) {
      const { messages, stats } = await c.transform(req, { format: "openai" });
      assert.equal(stats.fail_open, false);
      if (stats.trimmed) cuts++;
      const memories = recallMemories(messages);
      if (memories) blocks.push(memories);
    }
  } finally {
    await c.close();
  }
  return { id: s.id, blocks, cuts };
}

test("a later session recalls memories that the earlier session's cuts wrote", async () => {
  const state = scratchDir("sc-bank-");
  const first = await replay(state, "django__django-11087.json");
  assert.ok(first.cuts > 0, "the first session is cut");
  assert.deepEqual(first.blocks, [], "a session never recalls its own memories");
  const second = await replay(state, "django__django-11299.json");
  assert.ok(second.blocks.length > 0, "the second session carries a recall block");
  const db = await openSqlite({ path: join(state, "context", "banks", "django.db") });
  try {
    const sources = second.blocks.flat().map((text) => {
      const rows = db.query("SELECT kind, source FROM memories WHERE text = ?", [text]);
      return rows[0] ?? [null, null];
    });
    assert.ok(
      sources.some(([kind, source]) => kind === "cut" && source.startsWith(`${first.id} #`)),
      `a recalled memory was written by ${first.id}'s cuts: ${JSON.stringify(sources)}`,
    );
    assert.ok(!sources.some(([, source]) => source?.startsWith(second.id)));
  } finally {
    db.close?.();
  }
});

test("the measure counts file paths and identifiers, not sed fragments", () => {
  assert.deepEqual(namesIn("edited src/b.py while s/if 12s/)/ uses only_fields and QuerySet"), [
    "src/b.py",
    "b.py",
    "only_fields",
    "QuerySet",
  ]);
});

test("the bank section replaces itself in the report", () => {
  const r = {
    trimAt: 8000,
    at: "2026-01-01",
    groups: [],
    total: {
      sessions: 0,
      requests: 0,
      withBlock: 0,
      cuts: 0,
      cutsWithBlock: 0,
      used: 0,
      usedNew: 0,
    },
  };
  const once = spliceSection("# R\n\n## Speed and scale\n", bankSection(r));
  assert.ok(once.indexOf(BANK_BEGIN) < once.indexOf("## Speed and scale"));
  assert.equal(spliceSection(once, bankSection(r)), once);
});
