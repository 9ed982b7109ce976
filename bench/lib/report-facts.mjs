// Facts the report's prose states, computed from the build, the bench's inputs and its modules
// (never typed into a sentence): the engine's settings as the smarter-compact arm runs them, the
// recall tools, the tokenizer's version, the page sizes of the tasks, the real sessions' size.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCompactor, toolDefinitions } from "../../npm/js/index.js";
import { loadSession } from "../../npm/js/sessions.js";
import { engineModule } from "../../npm/js/wasm.js";
import { sessionFiles } from "./real-sessions.mjs";
import { makeTask } from "./tasks.mjs";
import { messageTokens } from "./tokens.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The settings of an engine opened like the smarter-compact arm's, and trim_at per model. */
export async function engineSettings(options, models) {
  const dir = mkdtempSync(join(tmpdir(), "scb-facts-"));
  try {
    const c = await createCompactor({
      sessionId: "facts",
      stateDir: dir,
      embedder: false,
      ...options,
    });
    const trimAt = {};
    for (const model of models) {
      const probe = [
        { role: "system", content: "probe" },
        { role: "user", content: "probe" },
      ];
      trimAt[model] = (await c.transform(probe, { model, format: "openai" })).stats.trim_at;
    }
    const s = await c.status();
    await c.close();
    return {
      trimAt,
      trimToFraction: s.trim_to_fraction,
      compressOver: s.compress_over_tokens,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Page sizes of each task at its first seed: entries and o200k tokens of normal and large pages,
 * and the engine's estimate of the smallest large page; for the test-log task, its one output's
 * lines, o200k tokens and the engine's estimate. */
async function pageSizes(tasks, seed) {
  const glue = await engineModule();
  const out = {};
  for (const spec of tasks) {
    const task = makeTask(spec, seed);
    if (spec.kind === "testlog") {
      // one output, the test run's
      const run = task.steps.find((s) => s.assistant.tool_calls[0].function.name === task.tool);
      out[spec.id] = {
        kind: spec.kind,
        outputLines: task.entries,
        outputTokens: messageTokens(run.result),
        outputEst: glue.estimateTokens(run.result.content),
      };
      continue;
    }
    const normal = [];
    const large = [];
    for (const { result } of task.steps) {
      const entries = result.content.split("\n").length - 1;
      const row = {
        entries,
        tokens: messageTokens(result),
        est: glue.estimateTokens(result.content),
      };
      if (entries > spec.pageSize) large.push(row);
      else if (entries === spec.pageSize) normal.push(row);
    }
    const span = (rows, k) => [
      Math.min(...rows.map((r) => r[k])),
      Math.max(...rows.map((r) => r[k])),
    ];
    out[spec.id] = {
      kind: spec.kind,
      pageSize: spec.pageSize,
      normalTokens: normal.reduce((s, r) => s + r.tokens, 0) / normal.length,
      largeEntries: large.length ? span(large, "entries") : null,
      largeTokens: large.length ? span(large, "tokens") : null,
      largeEstMin: large.length ? Math.min(...large.map((r) => r.est)) : null,
    };
  }
  return out;
}

/** Mean bytes of one message (JSON, OpenAI format) over the real sessions. */
function realSessionBytes() {
  let bytes = 0;
  let n = 0;
  for (const f of sessionFiles(0))
    for (const m of loadSession(f).history) {
      bytes += JSON.stringify(m).length;
      n++;
    }
  return { sessions: sessionFiles(0).length, messages: n, bytesPerMessage: bytes / n };
}

/** Everything above, for a report of `config` (the bench config as run) with the given models. */
export async function reportFacts(config, { models }) {
  const pkg = (p) => JSON.parse(readFileSync(join(ROOT, p, "package.json"), "utf8")).version;
  return {
    engine: await engineSettings({ config: config.arms["smarter-compact"].config ?? {} }, models),
    recallTools: (await toolDefinitions()).map((t) => t.name),
    tiktoken: pkg("node_modules/js-tiktoken"),
    pages: await pageSizes(config.tasks, config.seeds[0]),
    realSessions: realSessionBytes(),
  };
}
