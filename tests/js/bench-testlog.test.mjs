// The mechanism bench's test-log task (bench/lib/testlog.mjs): a seeded run of a monorepo's test
// suites with the failing tests in the middle, read by the oracle from the visible lines or,
// when smarter-compact's compressed output shows none, through smart_compact_get with a grep.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { createCompactor } from "../../npm/js/index.js";
import { runTrial } from "../../bench/lib/mechanism.mjs";
import { answerFromRecall, answerFromVisible, recallCall } from "../../bench/lib/oracle.mjs";
import { makeTask } from "../../bench/lib/tasks.mjs";
import { answerOf, failedNames, inMiddle, testRun } from "../../bench/lib/testlog.mjs";
import { scratchDir } from "./helpers/scratch.mjs";

const config = JSON.parse(readFileSync(new URL("../../bench/config.json", import.meta.url)));
// every test-log size the bench runs (full and quick), by id
const SPECS = [
  ...new Map(
    [...config.tasks, ...config.quick.tasks]
      .filter((t) => t.kind === "testlog")
      .map((t) => [t.id, t]),
  ).values(),
];
const SEEDS = [...new Set([...config.seeds, ...config.quick.seeds])];

test("the bench runs the test-log task at several sizes", () => {
  assert.ok(SPECS.length >= 3, `test-log sizes: ${SPECS.map((s) => s.id).join(", ")}`);
  assert.ok(
    config.quick.tasks.some((t) => t.kind === "testlog"),
    "the quick run has one too",
  );
});

test("every line naming a failing test sits outside the first and last 10%, every size and seed", () => {
  for (const spec of SPECS)
    for (const seed of SEEDS) {
      const run = testRun(spec, seed);
      const what = `${spec.id} seed ${seed}`;
      const n = run.lines.length;
      assert.equal(run.failed.length, spec.failures ?? 1, `${what}: failing tests`);
      assert.ok(n > 0.9 * spec.lines, `${what}: about the budget of lines (${n})`);
      // every line that names a failing test, found here from the text itself
      const at = run.lines.flatMap((l, i) => (run.failed.some((t) => l.includes(t)) ? [i] : []));
      assert.deepEqual(at, run.failedAt, `${what}: failedAt lists the lines naming a failure`);
      assert.ok(at.length >= 1, `${what}: the failure is named`);
      for (const i of at)
        assert.ok(i >= 0.1 * n && i < 0.9 * n, `${what}: line ${i} of ${n} in the middle`);
      assert.ok(inMiddle(run), `${what}: inMiddle`);
      // the run's summary names the failing suite, not the test
      const tail = run.lines.slice(-12).join("\n");
      assert.match(tail, /FAILED/);
      for (const t of run.failed) assert.ok(!tail.includes(t), `${what}: the tail omits ${t}`);
    }
});

test("the run is deterministic per seed and differs between seeds", () => {
  for (const spec of SPECS) {
    const a = testRun(spec, 4);
    assert.deepEqual(testRun(spec, 4), a, `${spec.id}: the same seed, the same run`);
    assert.notDeepEqual(testRun(spec, 5).lines, a.lines, `${spec.id}: another seed, another run`);
    assert.deepEqual(makeTask(spec, 4), makeTask(spec, 4), `${spec.id}: the same task`);
  }
});

test("failedNames reads the runners' failure lines, not passing tests with failure words", () => {
  const text = [
    "test billing::tests::rounds_invoice_on_error ... ok",
    "test cart::tests::splits_page ... FAILED",
    "tests/auth/test_token.py::test_parses_token_after_failure PASSED                [ 40%]",
    "[line 812] tests/auth/test_token.py::test_locks_cart FAILED                     [ 41%]",
    "    ✓ renders toast without panic (12 ms)",
    "thread 'ledger::tests::merges_batch' panicked at src/ledger.rs:41:7:",
    "test result: ok. 210 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
    "1204: FAILED tests/auth/test_token.py::test_locks_cart - AssertionError: assert 3 == 4",
  ].join("\n");
  assert.deepEqual(failedNames(text), [
    "cart::tests::splits_page",
    "ledger::tests::merges_batch",
    "tests/auth/test_token.py::test_locks_cart",
  ]);
  assert.equal(answerOf(["b", "a", "b"]), "a, b");
});

test("the oracle answers from the whole output and reads nothing from a head and tail alone", () => {
  const spec = SPECS[0];
  const task = makeTask(spec, 2);
  const q = task.questions[0];
  const run = task.steps[1].result;
  const lines = run.content.split("\n");
  const msg = (content) => [{ role: "tool", tool_call_id: run.tool_call_id, content }];
  assert.equal(answerFromVisible(task, q, msg(run.content)), q.answer, "all of it visible");
  const edges = [...lines.slice(0, lines.length / 10), ...lines.slice((-lines.length * 9) / 100)];
  assert.equal(answerFromVisible(task, q, msg(edges.join("\n"))), null, "head and tail only");
  // a compressed header's id gives the recall; without one it searches
  const header = `[smarter-compact] output compressed: 10 lines, ≈9 tokens; left out: 5 lines. Full text: smart_compact_get(id="abc123"); a slice: add start_line/end_line`;
  assert.deepEqual(recallCall(task, q, msg(`${header}\nhead`)), {
    name: "smart_compact_get",
    args: { id: "abc123", grep: "FAIL|panicked|Error" },
  });
  assert.equal(recallCall(task, q, msg("nothing")).name, "smart_compact_search");
  assert.equal(
    answerFromRecall(task, q, `7:     ✓ ${q.names[0]} on error`),
    null,
    "no runner's line",
  );
  const line = lines[task.failedAt[0]];
  assert.equal(answerFromRecall(task, q, `${task.failedAt[0] + 1}: ${line}`), q.answer);
});

test("smarter-compact's compressed output of a generated run still shows the failing test", async () => {
  const dir = scratchDir("sc-testlog-");
  let k = 0;
  for (const base of SPECS)
    for (const seed of [1, 2, 3]) {
      // no distractors: the compressor's failure lines are all there is to keep
      const spec = { ...base, distractors: 0 };
      const task = makeTask(spec, seed);
      const run = testRun(spec, seed);
      const c = await createCompactor({
        sessionId: `tl${k}`,
        stateDir: `${dir}/${k++}`,
        embedder: false,
      });
      try {
        const history = [task.system, task.task];
        for (const s of task.steps) history.push(s.assistant, s.result);
        history.push(task.done, { role: "user", content: task.questions[0].text });
        const { messages, stats } = await c.transform(history, { format: "openai" });
        const out = messages.find((m) => m.tool_call_id === `call_${task.tool}_0`).content;
        const what = `${spec.id} seed ${seed}`;
        assert.ok(stats.compressed >= 1, `${what}: compressed`);
        assert.match(out, /^\[smarter-compact\] output compressed: /, `${what}: the header`);
        assert.ok(out.length < run.lines.join("\n").length / 5, `${what}: much shorter`);
        assert.deepEqual(failedNames(out), run.failed, `${what}: the failing test is shown`);
      } finally {
        await c.close();
      }
    }
});

test("passing tests named after failures do not hide the failing one: smarter-compact answers every size from what it shows", async () => {
  const stateRoot = scratchDir("sc-testlog-trial-");
  const from = [];
  for (const spec of SPECS)
    for (const seed of [1, 2, 3]) {
      const task = makeTask(spec, seed);
      const tr = await runTrial(task, "smarter-compact", config, { stateRoot });
      const [a] = tr.answers;
      assert.equal(a.answer, task.questions[0].answer, `${spec.id} seed ${seed}: the failing test`);
      assert.equal(tr.armStats.failOpens, 0);
      from.push(a.tool);
    }
  // a pass line (`test_on_error PASSED`, `✓ handles errors`) is not kept as a failure line, so
  // the compressed output's kept failure lines hold the real failure and no recall is needed
  assert.deepEqual(
    from.filter((t) => t !== null),
    [],
    "every answer was visible in the compressed output",
  );
});

test("without recall, an arm that keeps the output under the window answers; one over it cannot", async () => {
  const stateRoot = scratchDir("sc-testlog-keep-");
  const big = SPECS.reduce((a, b) => (b.lines > a.lines ? b : a));
  const task = makeTask(big, 1);
  const keep = await runTrial(task, "keep", config, { stateRoot });
  const wide = await runTrial(task, "keep-1m", config, { stateRoot });
  assert.equal(wide.answers[0].ok, true, `${big.id}: the 1M window sees the failure`);
  assert.ok(keep.windowDrops >= 1, `${big.id}: the output is over the ${config.window} window`);
  assert.equal(keep.answers[0].ok, false, `${big.id}: the 200k window lost it`);
});
