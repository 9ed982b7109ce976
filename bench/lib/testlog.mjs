// The test-log task (kind "testlog"), seeded and reproducible: the agent runs a monorepo's whole
// test suite once and its output is large (cargo test, pytest -v and jest --verbose suites one
// after the other, with compiler output, warnings and console noise), with `failures` failing
// tests in the middle suites (never the first or last suite), and every line that names a failing
// test (FAILED, stdout, panicked and summary lines) sits outside the first and last EDGE of the
// lines: a run that breaks the rule is drawn again from the same seeded stream, so the rule holds
// for every size and seed and the run is still one per seed. The run ends with the runner's own
// summary, which names the failing suites but not the tests. Some passing tests have names with
// "error", "failure" or "panic" in them (`distractors` of them, at random), so a word search
// alone does not find the failure. The question asks for the failing tests' names.
import { rng, seedOf } from "./rng.mjs";

/** The task's tool: one call runs every suite. */
export const TESTLOG_TOOL = "run_tests";

/** Where the failing tests' lines may sit: not in the first or the last `EDGE` of the lines. */
export const EDGE = 0.12;

const AREAS = ["billing", "orders", "catalog", "accounts", "shipping", "search", "auth", "ledger"];
const VERBS = [
  "creates",
  "updates",
  "rejects",
  "parses",
  "renders",
  "merges",
  "splits",
  "rounds",
  "caches",
  "retries",
  "validates",
  "serialises",
  "expires",
  "sorts",
  "filters",
  "locks",
];
const NOUNS = [
  "invoice",
  "refund",
  "coupon",
  "cart",
  "token",
  "session",
  "address",
  "currency",
  "batch",
  "snapshot",
  "cursor",
  "webhook",
  "ledger_entry",
  "tax_rate",
  "shipment",
  "price_tier",
  "page",
  "locale",
];
const QUALS = [
  "",
  "",
  "",
  "when_empty",
  "with_unicode",
  "at_midnight",
  "twice",
  "in_order",
  "after_restart",
  "for_guest",
  "over_limit",
  "concurrently",
];
/** Qualifiers of the distractor names: they contain failure words but the tests pass. */
const DISTRACT = [
  "on_error",
  "after_failure",
  "without_panic",
  "error_message",
  "with_assertion_context",
  "on_fatal_signal",
  "exception_mapping",
];
const COMPONENTS = ["Cart", "Checkout", "InvoiceTable", "LoginForm", "SearchBox", "Toast"];

const pad = (s, w) => (s.length >= w ? `${s} ` : s.padEnd(w));
const pct = (i, n) => `[${String(Math.floor((100 * i) / n)).padStart(3)}%]`;

/** One suite's lines. `fails`: the indices of its failing tests. Returns {lines, failed, summary}. */
function suite(kind, area, budget, fails, r, distractP) {
  const seen = new Set();
  const name = (sep) => {
    for (let tries = 0; ; tries++) {
      const q = r.next() < distractP ? r.pick(DISTRACT) : r.pick(QUALS);
      // past a few collisions (a large suite uses up the word combinations) a case number
      const k = tries > 8 ? `case_${seen.size}` : "";
      const n = [r.pick(VERBS), r.pick(NOUNS), q, k].filter(Boolean).join(sep);
      if (!seen.has(n)) {
        seen.add(n);
        return n;
      }
    }
  };
  const tests = Math.max(20, budget - 20);
  const L = [];
  const failed = [];
  const ms = () => (r.int(1, 900) / 100).toFixed(2);
  if (kind === "cargo") {
    L.push(
      `     Running unittests src/lib.rs (target/debug/deps/${area}-${r.hex(16)})`,
      "",
      `running ${tests} tests`,
    );
    const details = [];
    for (let i = 0; i < tests; i++) {
      const mod = r.pick(NOUNS);
      const t = `${mod}::tests::${name("_")}`;
      if (fails.includes(i)) {
        L.push(`test ${t} ... FAILED`);
        failed.push(t);
        const [want, got] = [r.int(2, 90) * 100, r.int(2, 90) * 100 + 1];
        details.push(
          `---- ${t} stdout ----`,
          `thread '${t}' panicked at src/${mod}.rs:${r.int(20, 600)}:${r.int(5, 30)}:`,
          "assertion `left == right` failed",
          `  left: ${got}`,
          ` right: ${want}`,
          "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
          "",
        );
      } else L.push(`test ${t} ... ${r.next() < 0.01 ? "ignored" : "ok"}`);
    }
    L.push("");
    if (failed.length) {
      L.push("failures:", "", ...details, "", "failures:", ...failed.map((t) => `    ${t}`), "");
      L.push(
        `test result: FAILED. ${tests - failed.length} passed; ${failed.length} failed; 0 ignored; 0 measured; 0 filtered out; finished in ${ms()}s`,
      );
    } else
      L.push(
        `test result: ok. ${tests} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in ${ms()}s`,
      );
    L.push("");
  } else if (kind === "pytest") {
    L.push(
      "============================= test session starts ==============================",
      "platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0 -- /usr/bin/python3",
      `rootdir: /srv/monorepo/services/${area}`,
      "configfile: pyproject.toml",
      "plugins: cov-5.0.0, xdist-3.6.1, anyio-4.4.0",
      `collected ${tests} items`,
      "",
    );
    const details = [];
    const short = [];
    for (let i = 0; i < tests; i++) {
      const f = `tests/${area}/test_${r.pick(NOUNS)}.py`;
      const fn = `test_${name("_")}`;
      const id =
        r.next() < 0.05
          ? `${f}::${fn}[${r.pick(["utf8", "empty", "large", "eu", "us"])}]`
          : `${f}::${fn}`;
      if (fails.includes(i)) {
        L.push(`${pad(`${id} FAILED`, 72)}${pct(i, tests)}`);
        failed.push(id);
        const [want, got] = [r.int(2, 90) * 100, r.int(2, 90) * 100 + 1];
        details.push(
          `${"_".repeat(20)} ${fn} ${"_".repeat(20)}`,
          "",
          `    def ${fn.replace(/\[.*$/, "")}(client, ${r.pick(NOUNS)}):`,
          `        resp = client.post("/${area}/${r.hex(6)}", json={"amount": ${want}})`,
          `>       assert resp.json()["total"] == ${want}`,
          `E       AssertionError: assert ${got} == ${want}`,
          "",
          `${f}:${r.int(20, 400)}: AssertionError`,
        );
        short.push(`FAILED ${id} - AssertionError: assert ${got} == ${want}`);
      } else L.push(`${pad(`${id} PASSED`, 72)}${pct(i, tests)}`);
    }
    if (failed.length)
      L.push(
        "",
        "=================================== FAILURES ===================================",
        ...details,
      );
    L.push(
      "=============================== warnings summary ===============================",
      `services/${area}/app/compat.py:${r.int(10, 90)}`,
      `  DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for removal in a future version.`,
      "",
      "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html",
    );
    if (failed.length)
      L.push(
        "=========================== short test summary info ============================",
        ...short,
        `============= ${failed.length} failed, ${tests - failed.length} passed, 1 warning in ${ms()}s =============`,
      );
    else
      L.push(
        `======================= ${tests} passed, 1 warning in ${ms()}s =======================`,
      );
  } else {
    L.push(`> web-${area}@2.4.0 test`, "> jest --ci --verbose", "");
    let left = tests;
    let files = 0;
    while (left > 0) {
      const comp = r.pick(COMPONENTS);
      const n = Math.min(left, r.int(6, 30));
      L.push(`PASS src/${area}/${comp}.test.tsx (${ms()} s)`, `  ${comp}`);
      for (let i = 0; i < n; i++)
        L.push(`    ✓ ${name(" ").replace(/_/g, " ")} (${r.int(1, 60)} ms)`);
      if (r.next() < 0.2)
        L.push(
          "",
          "  console.warn",
          `    Warning: An update to ${comp} inside a test was not wrapped in act(...).`,
          "",
        );
      L.push("");
      left -= n;
      files++;
    }
    L.push(
      `Test Suites: ${files} passed, ${files} total`,
      `Tests:       ${tests} passed, ${tests} total`,
      `Snapshots:   ${r.int(0, 30)} passed, ${r.int(30, 40)} total`,
      `Time:        ${ms()} s`,
      "Ran all test suites.",
    );
  }
  return { lines: L, failed };
}

/** The run's output: `{lines, failed, failedAt}` (`failedAt`: 0-based line indices of every line
 * that names a failing test, all of them inMiddle). Deterministic per spec id and seed. */
export function testRun(spec, seed) {
  const r = rng(seedOf(spec.id, seed));
  for (;;) {
    const run = drawRun(spec, r);
    if (inMiddle(run)) return run;
  }
}

/** Whether every line of `run` that names a failing test lies outside the first and the last
 * `edge` of its lines. */
export function inMiddle(run, edge = EDGE) {
  const n = run.lines.length;
  return run.failedAt.length > 0 && run.failedAt.every((i) => i >= edge * n && i < (1 - edge) * n);
}

/** One draw of a run from the stream `r` (testRun keeps the first that is inMiddle). */
function drawRun(spec, r) {
  const total = spec.lines;
  const n = r.int(5, 8);
  const weights = Array.from(
    { length: n },
    (_, i) => (i === 0 || i === n - 1 ? 2 : 1) * (r.int(70, 130) / 100),
  );
  const wsum = weights.reduce((s, w) => s + w, 0);
  const pre = 12;
  const budgets = weights.map((w) => Math.round(((total - pre - 8) * w) / wsum));
  const areas = r.shuffle(AREAS).slice(0, n);
  const kinds = areas.map(() => r.pick(["cargo", "pytest", "jest"]));
  const middle = [...Array(n - 2).keys()].map((i) => i + 1);
  const failing = new Map();
  for (let k = 0; k < (spec.failures ?? 1); k++) {
    const s = r.pick(middle);
    if (kinds[s] === "jest") kinds[s] = r.pick(["cargo", "pytest"]);
    const at = r.int(5, budgets[s] - 40);
    failing.set(s, [...(failing.get(s) ?? []), at]);
  }
  const distractP = (spec.distractors ?? 0) / total;
  const lines = [
    "$ ./scripts/test-all.sh",
    "==> toolchain: rustc 1.83.0, Python 3.12.3, node v20.18.0",
    ...Array.from(
      { length: pre - 4 },
      () => `   Compiling ${r.pick(NOUNS).replace(/_/g, "-")} v0.${r.int(1, 9)}.${r.int(0, 20)}`,
    ),
    "    Finished `test` profile [unoptimized + debuginfo] target(s) in 41.07s",
    "",
  ];
  const failed = [];
  const results = [];
  areas.forEach((area, i) => {
    lines.push(`==> suite ${i + 1}/${n}: ${area} (${kinds[i]})`);
    const s = suite(kinds[i], area, budgets[i], failing.get(i) ?? [], r, distractP);
    lines.push(...s.lines);
    failed.push(...s.failed);
    results.push(`    ${pad(`${area} (${kinds[i]})`, 24)}${s.failed.length ? "FAILED" : "ok"}`);
  });
  const bad = results.filter((x) => x.endsWith("FAILED")).length;
  lines.push("==> summary", ...results, `==> ${bad} of ${n} suites failed; exit status 1`);
  const failedAt = [];
  lines.forEach((l, i) => {
    if (failed.some((t) => l.includes(t))) failedAt.push(i);
  });
  return { lines, failed: [...failed].sort(), failedAt };
}

/** The question's answer for these failing tests: their names, sorted, comma-separated. */
export const answerOf = (names) => [...new Set(names)].sort().join(", ");

const PREFIX = /^(?:\[line \d+\] |\d+: )/; // a compressed output's or a grep page's line number
const NAMED = [
  /^(\S+::\S+) FAILED\b/, // pytest -v
  /^FAILED (\S+::\S+)/, // pytest short summary
  /^test (\S+) \.\.\. FAILED$/, // cargo test
  /^---- (\S+) stdout ----$/, // cargo test failure details
  /^thread '([^']+)' panicked at /, // cargo test panic
];

/** The failing tests a text names (FAILED, stdout and panicked lines of the runners), sorted. */
export function failedNames(text) {
  const out = new Set();
  for (const raw of text.split("\n")) {
    const line = raw.replace(PREFIX, "").trimEnd();
    for (const re of NAMED) {
      const m = re.exec(line);
      if (m) out.add(m[1]);
    }
  }
  return [...out].sort();
}

/** The testlog task of a spec and a seed, in the shape of the other tasks (lib/tasks.mjs). */
export function testlogTask(spec, seed, { system, tools }) {
  const run = testRun(spec, seed);
  const call = (id, name, args, said) => ({
    role: "assistant",
    content: said,
    tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  });
  const steps = [
    {
      assistant: call(
        "call_read_file_0",
        "read_file",
        { path: "scripts/test-all.sh" },
        "I'll look at how the suites are run.",
      ),
      result: {
        role: "tool",
        tool_call_id: "call_read_file_0",
        content: [
          "#!/usr/bin/env bash",
          "# Runs every package's tests; keeps going after a failing suite and exits 1 at the end.",
          "set -uo pipefail",
          'for s in $(cat scripts/suites.txt); do run_suite "$s" || failed+=("$s"); done',
          'summary "${failed[@]}"',
        ].join("\n"),
      },
    },
    {
      assistant: call(`call_${TESTLOG_TOOL}_0`, TESTLOG_TOOL, {}, "Running the whole test suite."),
      result: {
        role: "tool",
        tool_call_id: `call_${TESTLOG_TOOL}_0`,
        content: run.lines.join("\n"),
      },
    },
  ];
  const one = run.failed.length === 1;
  return {
    id: spec.id,
    kind: "testlog",
    seed,
    entries: run.lines.length,
    tool: TESTLOG_TOOL,
    tools,
    system,
    task: {
      role: "user",
      content: `Task: CI is red on main. Run the whole test suite of the monorepo once with ${TESTLOG_TOOL} (it runs every package's cargo, pytest and jest suites and prints everything), then answer my questions about the run. Do not run it again: it takes 40 minutes.`,
    },
    steps,
    done: {
      role: "assistant",
      content: `The run finished (${run.lines.length} lines of output, exit status 1). Ready for your questions.`,
    },
    questions: [
      {
        kind: "lookup",
        key: "failed test",
        text: one
          ? "Which test failed in that run? Reply with the test's full name as the runner printed it, nothing else."
          : "Which tests failed in that run? Reply with their full names as the runner printed them, comma-separated, nothing else.",
        answer: answerOf(run.failed),
        names: run.failed,
      },
    ],
    failedAt: run.failedAt,
  };
}
