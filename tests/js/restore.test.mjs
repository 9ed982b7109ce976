// Undo from the command line: `smarter-compact restore <session>` asks for the latest cut to be
// lifted; the next request of the session (another process here, as a host would be) lifts it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createCompactor } from "../../npm/js/index.js";
import { replayInto, run, tempDir } from "./helpers/cli.mjs";

test("restore <session> lifts the latest cut on the session's next request", async () => {
  const stateDir = tempDir();
  const { history, status } = await replayInto(stateDir, "django__django-11087.json", "s1");
  assert.ok(status.trims >= 2, `needs trims, got ${status.trims}`);
  const r = run(["restore", "s1", "--json", "--state-dir", stateDir]);
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(plan.cut, status.last_trim.seq);
  assert.equal(plan.pending, 1);
  assert.ok(plan.cache_write_tokens > 0 && plan.messages > 0, r.stdout);
  const text = run(["restore", "s1", "--state-dir", stateDir]);
  assert.match(text.stdout, /lifts cut #\d+: \d+ messages come back; it writes ≈[\d.]+k? tokens/);

  const c = await createCompactor({ sessionId: "s1", stateDir, config: { trimAtTokens: 8000 } });
  try {
    const res = await c.transform(history, { format: "openai" });
    assert.deepEqual(res.stats.restored.cuts.length, 2, "two restores asked, two cuts lifted");
    assert.ok(res.stats.cut < plan.cut);
    assert.match(res.stats.notice, /lifted/);
    assert.equal((await c.status()).restores_pending, 0);
  } finally {
    await c.close();
  }
  const missing = run(["restore", "nope", "--state-dir", stateDir]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /E_NO_SESSION/);
});
