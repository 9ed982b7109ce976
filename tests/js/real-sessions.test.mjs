// Done-when 2 of the engine issue, on the built wasm package: all 32 real sessions replayed
// request by request at trim_at 8k, 16k and 32k.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, replay } from "../../npm/js/sessions.js";
import { scratchDir } from "./helpers/scratch.mjs";

const DIR = new URL("../data/sessions/swe-traj/", import.meta.url).pathname;
const sessions = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => loadSession(join(DIR, f)));
const ser = (m) => JSON.stringify(m);

/** Problems with tool-call pairing in an OpenAI-format request. */
function pairing(msgs) {
  const open = new Set();
  const problems = [];
  for (const m of msgs) {
    for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool" && !open.delete(m.tool_call_id))
      problems.push(`orphan result ${m.tool_call_id}`);
  }
  for (const id of open) problems.push(`orphan call ${id}`);
  return problems;
}

async function run(s, trimAt) {
  const c = await createCompactor({
    sessionId: "replay",
    stateDir: scratchDir("sc-rs-"),
    config: { trimAtTokens: trimAt },
  });
  const steps = [];
  for await (const step of replay(c, s.history)) steps.push(step);
  await c.close();
  return steps;
}

test("32 real sessions are there", () => assert.equal(sessions.length, 32));

for (const trimAt of [8000, 16000, 32000]) {
  test(`real sessions at trim_at ${trimAt}: invariants, sticky prefix, determinism`, async (t) => {
    const tally = { requests: 0, trims: 0, reused: 0, reusable: 0, over: 0, failOpen: 0 };
    for (const s of sessions) {
      const steps = await run(s, trimAt);
      let prev = null;
      steps.forEach(({ request, messages, stats }, k) => {
        const where = `${s.id} request ${k}`;
        tally.requests++;
        assert.equal(stats.fail_open, false, `${where}: ${stats.error?.message}`);
        assert.deepEqual(pairing(messages), [], where);
        assert.equal(ser(messages[0]), ser(request[0]), `${where}: system message`);
        const task = request[1].content;
        assert.ok(
          messages.some(
            (m) => m.role === "user" && typeof m.content === "string" && m.content.endsWith(task),
          ),
          `${where}: task turn`,
        );
        const recent = request
          .filter((m) => m.tool_calls)
          .slice(-3)
          .flatMap((m) => m.tool_calls.map((c) => c.id));
        for (const id of recent)
          assert.ok(
            messages.some((m) => m.tool_call_id === id),
            `${where}: recent exchange ${id}`,
          );
        if (stats.after_tokens > trimAt) {
          assert.equal(stats.over_limit, true, where);
          tally.over++;
        }
        if (stats.trimmed) tally.trims++;
        else if (prev) {
          tally.reusable++;
          const same = prev.every((m, i) => ser(m) === ser(messages[i]));
          assert.ok(same, `${where}: prefix changed without a trim`);
          tally.reused++;
        }
        prev = messages;
      });
      if (s === sessions[0] || s === sessions[16]) {
        const again = await run(s, trimAt);
        assert.deepEqual(
          again.map((x) => ser(x.messages)),
          steps.map((x) => ser(x.messages)),
          `${s.id}: same input, same bytes`,
        );
      }
    }
    assert.ok(tally.trims > 0);
    t.diagnostic(
      `trim_at=${trimAt} requests=${tally.requests} trims=${tally.trims} prefix_reuse=${tally.reused}/${tally.reusable} over_limit_minimum=${tally.over}`,
    );
  });
}
