// The digest inside the real hosts: OpenCode 1.18, Pi 1.x (Node 22) and Pi 0.73 (Node 20),
// headless and offline, the plugin loaded from the packed tarball, a scripted model. A session
// runs a failing test suite (its log compressed) and reads a file, gets an instruction in a later
// user turn, and goes on until a cut leaves all of that out of the request. The request after the
// cut must carry the pointer and a digest holding the instruction and a table-of-contents line
// per trimmed call; the model then greps the trimmed log and the trimmed file by the ids the
// digest gave it, and the next request must carry the matching lines with their line numbers.
// Every assertion is on what the scripted model received.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { contentText, startServer, toolResults } from "./lib/scripted-server.mjs";
import { cleanup, runOpenCode, runPi, setupOpenCodeHome, setupPiHome } from "./lib/hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const TRIM_AT = 6000;
const POINTER = "[smarter-compact] This session continues.";
const DIGEST_HEADER =
  '[smarter-compact] Digest of what left the request (#N is a message number: smart_compact_get(id="N") shows it in full):';
const COMPRESSED = "[smarter-compact] output compressed:";
const TASK = "Run the test suite with sh run_tests.sh, then read src/settings.py.";
const INSTRUCTION = "Never edit vendor/legacy.py; the release tag is ZEBRA-4471.";
/** Release notes that make the instruction's turn too long to stay in the request as it is (a
 * cut keeps earlier user turns of up to 300 tokens): it goes to the digest as head … tail. */
const NOTES = Array.from(
  { length: 40 },
  (_, k) => `Release note ${k + 1}: keep the public API of module_${k + 1} unchanged.`,
).join(" ");
const TURN_2 = `${INSTRUCTION} ${NOTES} Now check the build logs.`;
const FAILED_LINE = "FAILED tests/test_zebra.py::test_quux - AssertionError: assert 3 == 4";
const SUMMARY_LINE = "==== 1 failed, 599 passed in 12.34s ====";
const SETTING = "REQUEST_TIMEOUT = 30";
/** Most filler calls the last turn makes while it waits for a digest that holds the instruction. */
const MAX_FILLERS = 12;

/** The test log: 300 passing lines, the failure at line 301, 299 more, the summary at line 601. */
const testLog = () => {
  const pass = (from, to) =>
    Array.from(
      { length: to - from + 1 },
      (_, k) => `tests/test_alpha.py::test_case_${from + k} PASSED`,
    );
  return [...pass(1, 300), FAILED_LINE, ...pass(301, 599), SUMMARY_LINE].join("\n");
};

/** The project the session works in: a test runner that prints the log and fails, a settings file. */
function writeProject(proj) {
  fs.writeFileSync(path.join(proj, "run_tests.sh"), `cat <<'EOF'\n${testLog()}\nEOF\nexit 1\n`);
  fs.mkdirSync(path.join(proj, "src"));
  const settings = Array.from({ length: 60 }, (_, k) => `OPTION_${k + 1} = ${k + 1}`);
  settings.splice(40, 0, SETTING);
  fs.writeFileSync(path.join(proj, "src", "settings.py"), settings.join("\n") + "\n");
}

/**
 * The hosts, with what their tools hand back (seen in their requests): OpenCode's bash result is
 * the output alone (601 lines, no exit status) and its read result frames the file (`<path>`,
 * `<type>`, `<content>`, then `N: ` before each line and an end-of-file note: 67 lines); Pi's bash
 * result ends with "Command exited with code 1" (604 lines) and its read result is the file itself.
 */
const hosts = [
  {
    name: "OpenCode 1.18",
    setup: (server, pkg) =>
      setupOpenCodeHome({ server, pluginPath: path.join(pkg.dir, "js", "hosts", "opencode.js") }),
    readArgs: (file) => ({ filePath: file }),
    logResult: "601 lines",
    logLines: 601,
    readLines: 67,
    settingHit: [44, `41: ${SETTING}`],
    run: (home, o) =>
      runOpenCode({ home, timeoutMs: 180_000, continue: o.turn > 0, prompt: o.prompt, env: o.env }),
  },
  ...[false, true].map((legacy) => ({
    name: legacy ? "Pi 0.73 (Node 20)" : "Pi 1.x (Node 22)",
    setup: (server) => setupPiHome({ server }),
    readArgs: (file) => ({ path: file }),
    logResult: "exit 1 · 604 lines",
    logLines: 604,
    readLines: 61,
    settingHit: [41, SETTING],
    run: (home, o, pkg) =>
      runPi({
        home,
        legacy,
        extensionPath: path.join(pkg.dir, "js", "hosts", "pi.js"),
        sessionDir: home.sessionDir,
        continue: o.turn > 0,
        timeoutMs: 180_000,
        prompt: o.prompt,
        env: o.env,
      }),
  })),
];

/** The text parts of a body's messages, each on its own (a string content is one part). */
const parts = (body) =>
  body.messages.flatMap((m) =>
    Array.isArray(m.content) ? m.content.map((p) => contentText([p])) : [contentText(m.content)],
  );

/** The text parts of a body's user messages. */
const userParts = (body) => parts({ messages: body.messages.filter((m) => m.role === "user") });

/** The digest a body carries (from its header to the end of the pointer's part), or null. */
function digestOf(body) {
  const part = parts(body).find((p) => p.startsWith(POINTER) && p.includes(DIGEST_HEADER));
  return part ? part.slice(part.indexOf(DIGEST_HEADER)) : null;
}

/** The digest's table-of-contents line for a `tool` call whose short arguments start with
 * `args`: `{ call, result, line, blob }` (message numbers, the line, the blob id if any). */
function tocEntry(digest, tool, args) {
  const line = digest
    .split("\n")
    .find((l) => new RegExp(`^#\\d+→#\\d+ ${tool}: `).test(l) && l.includes(`${tool}: ${args}`));
  if (!line) return null;
  const [, call, result] = /^#(\d+)→#(\d+) /.exec(line);
  return { call, result, line, blob: / · blob ([0-9a-f]{16})$/.exec(line)?.[1] ?? null };
}

/** The numbered lines (`N: text`) of a smart_compact_get grep answer, as [N, text]. */
const grepHits = (answer) =>
  answer
    .split("\n")
    .map((l) => /^(\d+): (.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => [Number(m[1]), m[2]]);

/**
 * The script of the whole session. Turn 1: the failing test run (its log compressed) and the read.
 * Turn 2: the instruction arrives; four more outputs. Turn 3: fillers until a request carries a
 * digest that holds the instruction (`seen.digestAt`), then a grep of the test log by the id in its
 * ToC line, a grep of the settings file by its result's message number, and the answer.
 */
function sessionScript(host, projDir, seen) {
  const seq = (k) => ({
    tool: "bash",
    args: { command: `seq ${k * 100_000} ${k * 100_000 + 700}` },
  });
  const last = (body, ctx) => {
    if (seen.phase === "fill") {
      const digest = digestOf(body);
      if (digest?.includes(INSTRUCTION)) {
        seen.digestAt = ctx.agentRequests.length - 1;
        seen.digest = digest;
        seen.phase = "grep-log";
        const log = tocEntry(digest, "bash", "sh run_tests.sh");
        if (!log) return { text: "The digest names no test run." };
        return { tool: "smart_compact_get", args: { id: log.blob ?? log.result, grep: "FAILED" } };
      }
      if (seen.fillers === MAX_FILLERS) return { text: "No digest came." };
      seen.fillers++;
      return seq(10 + seen.fillers);
    }
    if (seen.phase === "grep-log") {
      seen.phase = "grep-settings";
      const read = tocEntry(seen.digest, "read", path.join(projDir, "src", "settings.py"));
      if (!read) return { text: "The digest names no read." };
      return { tool: "smart_compact_get", args: { id: read.result, grep: "request_timeout" } };
    }
    seen.phase = "done";
    return { text: "test_quux failed at line 301 of the log." };
  };
  return [
    { tool: "bash", args: { command: "sh run_tests.sh" } },
    { tool: "read", args: host.readArgs(path.join(projDir, "src", "settings.py")) },
    { text: "One test failed: test_quux." },
    ...[1, 2, 3, 4].map(seq),
    { text: "The build logs are checked." },
    ...Array.from({ length: MAX_FILLERS + 3 }, () => last),
  ];
}

for (const h of hosts) {
  test(
    `${h.name}: the digest carries the trimmed instruction and calls; grep finds the failure by its id`,
    { timeout: 600_000 },
    async (t) => {
      const pkg = installedPackage();
      const seen = { phase: "fill", fillers: 0, digestAt: -1, digest: null };
      const srv = await startServer({});
      const stateDir = scratchDir("sc-digest-state-");
      const env = {
        SMARTER_COMPACT_STATE_DIR: stateDir,
        CONTEXT_TRIM_AT_TOKENS: String(TRIM_AT),
        CONTEXT_DIGEST_FRACTION: "0.2",
      };
      const home = h.setup(srv, pkg);
      srv.push(...sessionScript(h, home.proj, seen));
      try {
        writeProject(home.proj);
        const turns = [TASK, TURN_2, "Which test failed, and on which line?"];
        for (const [turn, prompt] of turns.entries()) {
          const r = await h.run(home, { prompt, turn, env }, pkg);
          assert.equal(r.code, 0, `turn ${turn}: ${r.stderr.slice(-2000)}`);
        }
        const bodies = srv.agentRequests().map((q) => q.body);
        const at = seen.digestAt;
        assert.ok(
          at > 0,
          `no request carried a digest holding the instruction (${seen.fillers} fillers); digests:\n${bodies.map(digestOf).filter(Boolean).join("\n---\n")}`,
        );
        const cut = bodies[at];
        const digest = digestOf(cut);
        t.diagnostic(
          `request ${at} of ${bodies.length} (after ${seen.fillers} fillers):\n${digest}`,
        );

        // The pointer, then the digest, in the part the plugin put before the last user turn.
        const pointer = parts(cut).find((p) => p.startsWith(POINTER));
        assert.ok(pointer.includes(`\n${DIGEST_HEADER}\n`), pointer);
        // The long instruction of turn 2 is a line of the digest (head … tail), and nowhere
        // else in the request.
        assert.ok(
          bodies.slice(0, at).some((b) => userParts(b).includes(TURN_2)),
          "the instruction was a user turn before the cut",
        );
        assert.ok(
          digest
            .split("\n")
            .some(
              (l) =>
                new RegExp(`^#\\d+: ${INSTRUCTION.replace(/[.]/g, "\\.")} `).test(l) &&
                l.includes(" bytes left out] … ") &&
                l.endsWith("Now check the build logs."),
            ),
          `the digest does not carry the instruction as a user turn:\n${digest}`,
        );
        assert.deepEqual(
          parts(cut).filter((p) => p.includes("ZEBRA-4471")),
          [pointer],
          "the instruction is elsewhere in the request than in the digest",
        );
        // The session's first user turn (its task) always stays in the request, so it is not in
        // the digest.
        assert.ok(userParts(cut).includes(TASK), "the task left the request");
        assert.ok(!digest.includes(TASK), "the task is in the digest");

        // A ToC line per trimmed call: the test run with its failure line and blob id, the read.
        const log = tocEntry(digest, "bash", "sh run_tests.sh");
        assert.ok(log?.blob, `no ToC line with a blob id for the test run:\n${digest}`);
        assert.equal(
          log.line,
          `#${log.call}→#${log.result} bash: sh run_tests.sh → ${h.logResult} · "${FAILED_LINE}" · blob ${log.blob}`,
        );
        const settingsPath = path.join(home.proj, "src", "settings.py");
        const read = tocEntry(digest, "read", settingsPath);
        assert.ok(read, `no ToC line for the read:\n${digest}`);
        assert.equal(
          read.line,
          `#${read.call}→#${read.result} read: ${settingsPath} → ${h.readLines} lines`,
        );
        assert.ok(digest.includes(`${settingsPath} (read #${read.call})`), "files touched");
        // Before the cut the test run's output went out compressed under that blob id, and the
        // file's text went out whole; after it, neither is in the request.
        const header = (p) =>
          p.includes(COMPRESSED) && p.includes(`smart_compact_get(id="${log.blob}")`);
        assert.ok(
          bodies.slice(0, at).some((b) => parts(b).some(header)),
          `no request before the cut carried the compressed test log ${log.blob}`,
        );
        assert.ok(bodies.slice(0, at).some((b) => parts(b).some((p) => p.includes(SETTING))));
        assert.ok(!parts(cut).some(header), "the compressed test log is still in the request");
        assert.ok(
          !parts(cut).some((p) => p.includes(SETTING)),
          "the file's text is still in the request",
        );
        assert.deepEqual(
          parts(cut).filter((p) => p.includes(FAILED_LINE)),
          [pointer],
          "the failure line is elsewhere in the request than in the digest",
        );

        // The greps by the digest's ids: the failing line of the log and the setting, numbered.
        assert.equal(seen.phase, "done", "the model did not get to answer");
        const answers = bodies.slice(at + 1).flatMap((b) => toolResults(b).map((r) => r.text));
        const logAnswer = answers.find((a) =>
          a.includes(
            `[smart_compact_get id=${log.blob} grep="FAILED": 2 of lines 1–${h.logLines} (of ${h.logLines}) match]`,
          ),
        );
        assert.ok(logAnswer, `no answer to the grep of the test log: ${answers.join("\n---\n")}`);
        assert.deepEqual(grepHits(logAnswer), [
          [301, FAILED_LINE],
          [601, SUMMARY_LINE],
        ]);
        const setAnswer = answers.find((a) =>
          a.includes(
            `[smart_compact_get id=${read.result} grep="request_timeout": 1 of lines 1–${h.readLines} (of ${h.readLines}) match]`,
          ),
        );
        assert.ok(setAnswer, `no answer to the grep of the read: ${answers.join("\n---\n")}`);
        assert.deepEqual(grepHits(setAnswer), [h.settingHit]);
      } finally {
        await srv.close();
        cleanup(home);
      }
    },
  );
}
