// The mechanism bench's idle phase (bench/lib/idle.mjs): idle gaps on a simulated clock, a
// prompt cache that expires after its TTL in the meter, and the smarter-compact arm with
// cache-cold cuts on and off at the same settings.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { idlePhase } from "../../bench/lib/idle.mjs";
import { IDLE } from "../../bench/lib/idle-params.mjs";
import { Meter } from "../../bench/lib/meter.mjs";
import { engineSettings } from "../../bench/lib/report-facts.mjs";
import { IDLE_BEGIN, IDLE_END, idleSection, spliceIdle } from "../../bench/lib/report-idle.mjs";
import { idleGaps, makeTask } from "../../bench/lib/tasks.mjs";
import { scratchDir } from "./helpers/scratch.mjs";

const config = JSON.parse(readFileSync(new URL("../../bench/config.json", import.meta.url)));
// two of the quick run's tasks, two seeds: a few seconds
const small = {
  ...config,
  tasks: config.quick.tasks.filter((t) => ["kv-R1000", "log-L1600"].includes(t.id)),
  seeds: [1, 2],
};

test("idle gaps are seeded by task and seed: mostly short, some over the cache's TTL", () => {
  const spec = config.tasks.find((t) => t.id === "log-L6400");
  const a = idleGaps(makeTask(spec, 3), IDLE);
  assert.deepEqual(idleGaps(makeTask(spec, 3), IDLE), a, "the same task and seed, the same gaps");
  assert.notDeepEqual(idleGaps(makeTask(spec, 4), IDLE), a, "another seed, other gaps");
  const all = [...a.loop.slice(1), ...a.questions];
  const long = all.filter((g) => g > IDLE.ttlMs);
  assert.ok(long.length >= 2, `some gaps over the TTL: ${long.length}`);
  assert.ok(long.length < all.length / 4, `most gaps short: ${long.length} of ${all.length}`);
  assert.equal(a.loop[0], 0, "nothing before the first request");
});

test("the meter's cache expires after its TTL: the next request writes its whole prompt", () => {
  const cache = { minPrefix: 10, read: 0.1, write: 1.25 };
  const m = new Meter(100, cache, { ttlMs: IDLE.ttlMs });
  const msgs = [
    { role: "system", content: "s ".repeat(200) },
    { role: "user", content: "u ".repeat(200) },
  ];
  const first = m.request(msgs, [], 1_000_000);
  const warm = m.request([...msgs, { role: "user", content: "again" }], [], 1_000_000 + 60_000);
  const cold = m.request(
    [...msgs, { role: "user", content: "again" }, { role: "user", content: "later" }],
    [],
    1_000_000 + 60_000 + IDLE.ttlMs + 1,
  );
  assert.equal(first.read, 0);
  assert.equal(warm.expired, false);
  assert.ok(warm.read >= first.tokens, "inside the TTL the shared prefix is read");
  assert.equal(cold.expired, true);
  assert.equal(cold.read, 0, "after the TTL nothing is read");
  assert.equal(cold.write, cold.tokens, "the whole prompt is written");
  const noClock = new Meter(100, cache);
  noClock.request(msgs);
  assert.ok(noClock.request(msgs).read > 0, "without a clock the cache never expires");
});

test("idle phase: cache-cold cuts at long gaps, none when off, the same score at a lower cost", async () => {
  const engine = await engineSettings({ config: {} }, [config.model]);
  const res = await idlePhase(small, IDLE, { stateRoot: scratchDir("sc-idle-"), engine });
  assert.equal(res.engine.ttlOn, 300, "the engine's built-in cache lifetime: 5 minutes");
  assert.equal(res.engine.ttlOff, 0, "the off arm's config.toml turns it off");
  let coldCuts = 0;
  for (const spec of small.tasks)
    for (const seed of small.seeds) {
      const [on, off] = ["on", "off"].map((v) =>
        res.trials.find((t) => t.task === spec.id && t.seed === seed && t.variant === v),
      );
      const what = `${spec.id} seed ${seed}`;
      assert.equal(on.score, off.score, `${what}: the same score`);
      assert.equal(on.score, 1, `${what}: every answer right`);
      assert.equal(on.failOpens + off.failOpens, 0, `${what}: no fail-open`);
      assert.equal(off.coldCuts, 0, `${what}: no cache-cold cut when off`);
      assert.equal(on.longGaps, off.longGaps, `${what}: the same gaps in both arms`);
      assert.ok(on.longGaps >= 1, `${what}: at least one gap over the TTL`);
      for (const t of [on, off])
        assert.equal(t.expired, t.longGaps, `${what}: the cache expired at each long gap`);
      const cutAtGap = on.longGapRequests.filter((r) => r.cold).length;
      assert.equal(cutAtGap, on.coldCuts, `${what}: every cache-cold cut follows a long gap`);
      // every request after a long gap above trim_to is cut, but for the engine's loop guard: a
      // cut under trim_at must free min_free_fraction × trim_at, so a request up to about
      // trim_to + that much (a page more at most) may go out uncut
      const { trimTo, minFree } = res.engine;
      const above = on.longGapRequests.filter((x) => x.aboveTrimTo);
      const guarded = above.filter((x) => !x.cold);
      for (const r of guarded)
        assert.ok(
          r.engineTokens < trimTo + 2 * minFree,
          `${what}: left uncut after a long gap at ${r.engineTokens} tokens`,
        );
      for (const k of ["haiku", "sonnet"])
        if (on.coldCuts) assert.ok(on.cost[k] < off.cost[k], `${what}: cheaper with a cut, ${k}`);
        else assert.equal(on.cost[k], off.cost[k], `${what}: no cut, the same requests, ${k}`);
      coldCuts += on.coldCuts;
    }
  assert.ok(coldCuts >= small.tasks.length, `cache-cold cuts made: ${coldCuts}`);

  const section = idleSection(res, config.prices.models, { forTables: true });
  assert.match(section, /\| kv-store R1000 \| on \| 1\.00 \|/);
  assert.match(section, /\| kv-store R1000 \| off \| 1\.00 \|/);
  const report = `# r\n\nintro\n\n## Real sessions\n\nrest\n`;
  const once = spliceIdle(report, section, "## Real sessions");
  assert.ok(once.indexOf(IDLE_END) < once.indexOf("## Real sessions"), "before the next section");
  assert.equal(spliceIdle(once, section, "## Real sessions"), once, "merging again: the same file");
  assert.equal(once.split(IDLE_BEGIN).length, 2, "one idle section");
});
