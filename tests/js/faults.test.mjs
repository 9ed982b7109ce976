// Faults the host must survive: a trapped or corrupted wasm instance is replaced, and the session
// goes on from what its store holds.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { engineModule, instanceExports } from "../../npm/js/wasm.js";

const { history } = loadSession(new URL("../../../shared/data/sessions/swe-traj/django__django-11087.json", import.meta.url).pathname);
const REQS = requests(history);

test("a corrupted wasm instance: that request fails open, the next one runs on a fresh instance", async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "sc-trap-"));
  const ser = (m) => JSON.stringify(m);
  // Reference: the same requests with no fault.
  const ref = await createCompactor({ sessionId: "ref", stateDir, config: { trimAtTokens: 8000 }, embedder: false });
  const expected = [];
  for (const r of REQS) expected.push(ser((await ref.transform(structuredClone(r))).messages));
  const c = await createCompactor({ sessionId: "trap", stateDir, config: { trimAtTokens: 8000 }, embedder: false });
  const k = 20;
  for (const r of REQS.slice(0, k)) assert.equal((await c.transform(structuredClone(r))).stats.fail_open, false);
  const before = await engineModule();
  new Uint8Array(instanceExports(before).memory.buffer).fill(0xff); // smash the whole heap
  const hit = await c.transform(structuredClone(REQS[k]));
  assert.equal(hit.stats.fail_open, true, "the request during the fault goes out unchanged");
  assert.equal(ser(hit.messages), ser(REQS[k]));
  const after = await c.transform(structuredClone(REQS[k + 1]));
  assert.equal(after.stats.fail_open, false, "the next request works");
  assert.notEqual(await engineModule(), before, "on a new instance");
  assert.equal(ser(after.messages), expected[k + 1], "with the same bytes as without the fault (state came back from the store)");
  for (const [i, r] of REQS.slice(k + 2).entries()) assert.equal(ser((await c.transform(structuredClone(r))).messages), expected[k + 2 + i]);
  const status = await c.status();
  assert.ok(status.fail_opens >= 1);
});
