// The threshold from the model's window, in the real hosts, with no threshold configured: a
// scripted model whose window is 24,000 tokens, a session that crosses the threshold at least three
// times, the host's own compaction never running, a notice in the host's UI layer on each trim, and
// /smarter-compact:restore sending the pre-cut request again. OpenCode runs as `opencode serve`
// (its bus events recorded from GET /event), Pi 1.x as `pi --mode rpc` (its UI requests on stdout).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { startServer, toolResults } from "./lib/scripted-server.mjs";
import { cleanup, hostPaths, setupOpenCodeHome, setupPiHome } from "./lib/hosts.mjs";
import { startOpenCodeServer, startPiRpc } from "./lib/live-hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const WINDOW = 24_000;
const MAX_OUTPUT = 4_096;
const POINTER = "[smarter-compact] This session continues.";
const TRIM_NOTICE = /^smarter-compact: \d+ older messages trimmed/;

/** The rule of src/config/threshold.rs for a built-in threshold (125,000 for an unknown model):
 * at most 60% of the window less the host's reserve (never less than a quarter of the window). */
const ruleFor = (window, reserve) =>
  Math.min(125_000, Math.floor(0.6 * Math.max(window - reserve, Math.floor(window / 4))));

/** `n` bash steps whose outputs (≈ `lines` short lines each) stay under the compression bar. */
const bashSteps = (n, lines, from) =>
  Array.from({ length: n }, (_, k) => ({
    tool: "bash",
    args: { command: `seq ${(from + k) * 100_000} ${(from + k) * 100_000 + lines - 1}` },
  }));

/** The store's request rows, one per model request the plugin rewrote, in order. */
function requestRows(stateDir) {
  const dir = path.join(stateDir, "context", "sessions");
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".db"));
  assert.equal(files.length, 1, `one session store: ${files}`);
  const db = new Database(path.join(dir, files[0]), { readonly: true });
  try {
    return db
      .prepare("SELECT trimmed, before_tokens, after_tokens, over_limit, fail_open FROM requests")
      .all();
  } finally {
    db.close();
  }
}

/** The store's rows once it holds `n` of them: sql.js (Pi 0.73) writes the file a second after
 * its last change, so a reader waits for the rows it expects (deadline: a minute). */
async function rowsOnceWritten(stateDir, n) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    let rows = [];
    try {
      rows = requestRows(stateDir);
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    if (rows.length >= n || Date.now() > deadline) return rows;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `smarter-compact status --json` of the installed package for one session, run while the host
 * still holds the store open (under Node 22: node:sqlite reads the host's write-ahead log). */
function cliStatus(pkg, stateDir, session) {
  const r = spawnSync(
    hostPaths().node22,
    [path.join(pkg.dir, "js", "cli.js"), "status", "--session", session, "--json"],
    { env: { ...process.env, SMARTER_COMPACT_STATE_DIR: stateDir }, encoding: "utf8" },
  );
  assert.equal(r.status, 0, `status --json: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}

/** Per request: our estimate before → after, and the provider's count (the scripted server
 * reports the body's characters / 4 as prompt tokens, which is what the host counts). */
const figures = (bodies, rows) =>
  rows
    .map(
      (r, k) =>
        `${k}:${r.trimmed ? "T" : "-"} ${r.before_tokens}→${r.after_tokens} sent≈${Math.ceil(JSON.stringify(bodies[k] ?? "").length / 4)}`,
    )
    .join(" ");

/** The context_status text the model got back, from the request that followed the call. */
function statusSeen(bodies) {
  return bodies
    .flatMap((b) => toolResults(b).map((r) => r.text))
    .find((t) => t.includes("threshold in force:"));
}

/**
 * What every host must show: the threshold in force, ≥3 trims each within it and each with a
 * notice, no fail-open. `bodies` are the agent requests, 1:1 with the store's rows.
 */
function assertTrimmedWithin(bodies, rows, status, notices, { trimAt, model }) {
  assert.equal(rows.length, bodies.length, "the plugin rewrote every model request once");
  const seen = statusSeen(bodies);
  assert.ok(seen, "context_status was answered");
  assert.ok(
    seen.includes(
      `threshold in force: ${trimAt} tokens for ${model} (context window ${WINDOW} tokens)`,
    ),
    seen,
  );
  assert.equal(status.trim_at_override, null, "no threshold configured");
  const trims = rows.filter((r) => r.trimmed);
  assert.ok(trims.length >= 3, `trims: ${trims.length}`);
  for (const [k, r] of rows.entries()) {
    assert.equal(r.fail_open, 0, `request ${k} failed open`);
    if (!r.trimmed) continue;
    assert.ok(r.before_tokens > trimAt, `request ${k} trimmed at ${r.before_tokens} tokens`);
    assert.ok(r.after_tokens <= trimAt || r.over_limit, `request ${k}: ${r.after_tokens} after`);
    assert.ok(JSON.stringify(bodies[k].messages).includes(POINTER), `request ${k}: no pointer`);
  }
  assert.equal(status.trims, trims.length, "status counts every trim");
  const trimNotices = notices.filter((m) => TRIM_NOTICE.test(m));
  assert.equal(trimNotices.length, trims.length, `one notice per trim: ${notices.join(" / ")}`);
}

/**
 * After /smarter-compact:restore, the next request goes out as it would have without the latest
 * cut: the request sent just before that cut is a byte-for-byte prefix of it (every message, as
 * JSON), and everything else in the body (model, tools, options) is the same. What follows the
 * prefix is what the session added since, ending with the turn that follows the restore.
 */
function assertRestored(bodies, rows, restoredAt) {
  const lastCut = rows.findLastIndex((r, k) => k < restoredAt && r.trimmed);
  assert.ok(lastCut > 0, "a cut before the restore");
  const pre = bodies[lastCut - 1];
  const cut = bodies[lastCut];
  const post = bodies[restoredAt];
  const msgs = (b) => b.messages.map((m) => JSON.stringify(m));
  const prefixOf = (a, b) => a.every((m, i) => m === b[i]);
  assert.ok(!prefixOf(msgs(pre), msgs(cut)), "the cut changed the request");
  assert.ok(
    prefixOf(msgs(pre), msgs(post)),
    `request ${restoredAt} (after the restore) does not start with request ${lastCut - 1} (before the cut)`,
  );
  const rest = (b) => JSON.stringify({ ...b, messages: null });
  assert.equal(rest(post), rest(pre), "the body around the messages changed");
  assert.ok(post.messages.length > pre.messages.length);
}

test(
  "OpenCode 1.18: the 24k window sets the threshold; three trims, three toasts, no compaction of its own, restore, /compact gets the store's note",
  { timeout: 600_000 },
  async (t) => {
    const pkg = installedPackage();
    const trimAt = ruleFor(WINDOW, Math.min(MAX_OUTPUT, 32_000));
    const script = [
      ...bashSteps(7, 600, 1),
      { text: "First pass done." },
      ...bashSteps(7, 600, 8),
      { text: "Second pass done." },
      { tool: "context_status", args: {} },
      ...bashSteps(7, 600, 15),
      { text: "Third pass done." },
      { text: "Restored and going on." },
      { text: "After the summary." },
    ];
    const srv = await startServer({ script, auxText: "Summary of the session." });
    const stateDir = scratchDir("sc-window-oc-");
    const home = setupOpenCodeHome({
      server: srv,
      pluginPath: path.join(pkg.dir, "js", "hosts", "opencode.js"),
      contextLimit: WINDOW,
      outputLimit: MAX_OUTPUT,
    });
    const oc = await startOpenCodeServer(home, { env: { SMARTER_COMPACT_STATE_DIR: stateDir } });
    try {
      const sid = await oc.newSession();
      for (const p of ["Check the build logs.", "Check them again.", "Status, then once more."])
        await oc.prompt(sid, p);
      const session = await oc.messages(sid);
      // OpenCode's own count of each request (the provider's usage) stayed below its compaction
      // line, the window less the output limit.
      for (const { info } of session.filter((m) => m.info.role === "assistant")) {
        const n = info.tokens.total || info.tokens.input + info.tokens.output;
        assert.ok(n > 0 && n < WINDOW - MAX_OUTPUT, `OpenCode counted ${n} tokens`);
      }
      const parts = session.flatMap((m) => m.parts.map((p) => p.type));
      assert.ok(!parts.includes("compaction"), `OpenCode compacted on its own: ${parts}`);
      assert.ok(!oc.events.some((e) => e.type === "session.compacted"), "session.compacted");

      const toasts = () =>
        oc.events.filter((e) => e.type === "tui.toast.show").map((e) => e.properties.message);
      const before = srv.agentRequests().length;
      const status = cliStatus(pkg, stateDir, sid);
      await oc.command(sid, "smarter-compact:restore");
      await oc
        .until(() => toasts().some((m) => m.includes("the next request lifts cut #")), "a toast")
        .catch((e) => assert.fail(`${e.message}; toasts: ${toasts().join(" / ")}`));
      assert.equal(
        srv.agentRequests().length,
        before + 1,
        "the restore command asked the model once",
      );

      const bodies = srv.agentRequests().map((q) => q.body);
      let rows = await rowsOnceWritten(stateDir, bodies.length);
      t.diagnostic(figures(bodies, rows));
      assertTrimmedWithin(bodies.slice(0, before), rows.slice(0, before), status, toasts(), {
        trimAt,
        model: "mock-model",
      });
      assertRestored(bodies, rows, before);

      // The user forces OpenCode's own compaction: its summary request carries the store's note.
      const requestsBefore = srv.requests.length;
      await oc.summarize(sid);
      const summary = srv.requests
        .slice(requestsBefore)
        .find((q) => !q.agent && JSON.stringify(q.body).includes("session store"));
      assert.ok(summary, "no summary request carried the store's note");
      const note = JSON.stringify(summary.body);
      assert.match(note, /All \d+ messages of this session are kept in full/);
      assert.match(note, new RegExp(`${status.trims} trims so far`));
      // After the host's summary the plugin still works: the next request is rewritten, no fail-open.
      await oc.prompt(sid, "Go on after the summary.");
      // (OpenCode also ran the compaction's copy of the history through the plugin: one more row.)
      rows = requestRows(stateDir);
      assert.equal(rows.at(-1).fail_open, 0);
      assert.equal(srv.agentRequests().at(-1).reply.text, "After the summary.");
    } finally {
      await oc.close();
      await srv.close();
      cleanup(home);
    }
  },
);

for (const legacy of [false, true]) {
  test(
    `${legacy ? "Pi 0.73 (Node 20)" : "Pi 1.x"}: the 24k window sets the threshold; three trims, three notifies, no compaction entry, restore`,
    { timeout: 600_000 },
    async (t) => {
      const pkg = installedPackage();
      const PI_RESERVE = 16_384;
      const trimAt = ruleFor(WINDOW, PI_RESERVE);
      const script = [
        ...bashSteps(8, 250, 1),
        { text: "First pass done." },
        ...bashSteps(8, 250, 9),
        { text: "Second pass done." },
        { tool: "context_status", args: {} },
        ...bashSteps(8, 250, 17),
        { text: "Third pass done." },
        { text: "Restored and going on." },
      ];
      const srv = await startServer({ script });
      const stateDir = scratchDir("sc-window-pi-");
      const home = setupPiHome({ server: srv, contextWindow: WINDOW, maxTokens: MAX_OUTPUT });
      const pi = await startPiRpc(home, {
        extensionPath: path.join(pkg.dir, "js", "hosts", "pi.js"),
        env: { SMARTER_COMPACT_STATE_DIR: stateDir },
        legacy,
      });
      try {
        const contextTokens = [];
        for (const p of ["Check the build logs.", "Check them again.", "Status, then once more."]) {
          await pi.prompt(p);
          const usage = (await pi.send({ type: "get_session_stats" })).contextUsage;
          // (Pi 0.73's stats have no contextUsage.)
          if (usage || !legacy) contextTokens.push(usage?.tokens);
        }
        const notices = () =>
          pi.events
            .filter((e) => e.type === "extension_ui_request" && e.method === "notify")
            .map((e) => e.message);
        const before = srv.agentRequests().length;
        const { sessionId, sessionFile } = await pi.send({ type: "get_state" });
        await rowsOnceWritten(stateDir, before);
        const status = cliStatus(pkg, stateDir, sessionId);
        await pi.command("/smarter-compact:restore", () =>
          notices().some((m) => m.includes("the next request lifts cut #")),
        );
        await pi.prompt("Go on.");

        const entries = fs
          .readFileSync(sessionFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        assert.ok(entries.length > 20, `session entries: ${entries.length}`);
        assert.deepEqual(
          entries.filter((e) => e.type === "compaction"),
          [],
          "Pi compacted on its own",
        );
        assert.ok(!pi.events.some((e) => /compaction_start/.test(e.type)), "compaction started");
        // Pi's own count of the context (the provider's usage) stayed below its compaction line.
        for (const n of contextTokens) assert.ok(n < WINDOW - PI_RESERVE, `Pi saw ${n} tokens`);
        t.diagnostic(`Pi's context tokens after each turn: ${contextTokens.join(", ")}`);

        const bodies = srv.agentRequests().map((q) => q.body);
        const rows = await rowsOnceWritten(stateDir, bodies.length);
        t.diagnostic(figures(bodies, rows));
        assertTrimmedWithin(bodies.slice(0, before), rows.slice(0, before), status, notices(), {
          trimAt,
          model: "mock-model",
        });
        assertRestored(bodies, rows, before);
      } finally {
        await pi.close();
        await srv.close();
        cleanup(home);
      }
    },
  );
}

// The control: the same sessions without the plugin cross the hosts' own compaction lines, so
// staying below them above is the plugin's doing.
test(
  "without the plugin, the same sessions make OpenCode compact and pass Pi 1.x's compaction line",
  { timeout: 600_000 },
  async (t) => {
    const turns = ["Check the build logs.", "Check them again.", "Once more."];
    {
      const srv = await startServer({
        script: [
          ...bashSteps(7, 600, 1),
          { text: "1" },
          ...bashSteps(7, 600, 8),
          { text: "2" },
          ...bashSteps(7, 600, 15),
        ],
        auxText: "Summary of the session.",
      });
      const home = setupOpenCodeHome({
        server: srv,
        contextLimit: WINDOW,
        outputLimit: MAX_OUTPUT,
      });
      const oc = await startOpenCodeServer(home);
      try {
        const sid = await oc.newSession();
        for (const p of turns) await oc.prompt(sid, p);
        const parts = (await oc.messages(sid)).flatMap((m) => m.parts.map((p) => p.type));
        assert.ok(parts.includes("compaction"), "OpenCode did not compact without the plugin");
      } finally {
        await oc.close();
        await srv.close();
        cleanup(home);
      }
    }
    {
      const srv = await startServer({
        script: [
          ...bashSteps(8, 250, 1),
          { text: "1" },
          ...bashSteps(8, 250, 9),
          { text: "2" },
          ...bashSteps(8, 250, 17),
        ],
        auxText: "Summary of the session.",
      });
      const home = setupPiHome({ server: srv, contextWindow: WINDOW, maxTokens: MAX_OUTPUT });
      const pi = await startPiRpc(home, {});
      try {
        const counted = [];
        for (const p of turns) {
          await pi.prompt(p);
          counted.push((await pi.send({ type: "get_session_stats" })).contextUsage?.tokens);
        }
        // Pi's count passes its compaction line (its summary needs more than keepRecentTokens =
        // 20,000 of history to cut, so this short session gets no entry: Pi sends it whole).
        assert.ok(
          counted.some((n) => n > WINDOW - 16_384),
          `Pi's count stayed below its line without the extension: ${counted}`,
        );
        t.diagnostic(`Pi's context tokens without the extension: ${counted.join(", ")}`);
      } finally {
        await pi.close();
        await srv.close();
        cleanup(home);
      }
    }
  },
);
