// The arms: what each approach sends to the model for a given client-side history.
//
// Every arm gets the same client history (the host keeps everything) and returns the messages it
// sends. The provider's context window applies last to every arm: what does not fit is lost
// from the oldest end (after the system prompt and the task turn, whole tool exchanges at a time).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCompactor, compactContext, runTool, toolDefinitions } from "../../npm/js/index.js";
import { configPath } from "../../npm/js/config.js";
import { STANDING_INSTRUCTION } from "../../npm/js/hosts/common.js";
import { engineModule } from "../../npm/js/wasm.js";
import { fixedTokens, messageTokens } from "./tokens.mjs";

const sumTokens = (msgs) => msgs.reduce((s, m) => s + messageTokens(m), 0);

/** Drops whole exchanges after the system prompt and the task turn until the request fits. */
export function fitWindow(messages, fixed, window) {
  let total = fixed + sumTokens(messages);
  if (total <= window) return { messages, dropped: 0 };
  const head = messages.slice(0, 2);
  let i = 2;
  while (total > window && i < messages.length - 1) {
    const m = messages[i];
    total -= messageTokens(m);
    i++;
    if (m.role === "assistant" && m.tool_calls?.length) {
      const ids = new Set(m.tool_calls.map((c) => c.id));
      while (
        i < messages.length &&
        messages[i].role === "tool" &&
        ids.has(messages[i].tool_call_id)
      )
        total -= messageTokens(messages[i++]);
    }
  }
  // a result whose call left with the window would be an invalid request: it leaves too
  while (i < messages.length && messages[i].role === "tool") total -= messageTokens(messages[i++]);
  return { messages: head.concat(messages.slice(i)), dropped: i - 2 };
}

/** Replaces a tool result by a placeholder, once per message (the same object every time). */
function placeholders(text) {
  const made = new Map();
  return (m) => {
    let p = made.get(m);
    if (!p) made.set(m, (p = { ...m, content: text }));
    return p;
  };
}

const contentTokens = new WeakMap();
function toolOutputTokens(m) {
  let n = contentTokens.get(m);
  if (n === undefined) contentTokens.set(m, (n = messageTokens({ content: m.content })));
  return n;
}

/** Keep everything; only the window applies. */
function keepArm(task, cfg, window) {
  return {
    hasRecall: false,
    tools: task.tools,
    system: task.system,
    window,
    prepare: async (h) => ({ messages: h, events: [] }),
  };
}

/** OpenCode-style prune: walking back from the newest tool output, the first `protect` tokens of
 * tool output are kept; older outputs are cleared once at least `minimum` tokens can be freed.
 * Cleared outputs stay cleared (stable placeholders). Evaluated before every request. */
function pruneArm(task, cfg, window) {
  const { protect, minimum, placeholder } = cfg;
  const cleared = new Set();
  const ph = placeholders(placeholder);
  return {
    hasRecall: false,
    tools: task.tools,
    system: task.system,
    window,
    async prepare(h) {
      let total = 0;
      let freed = 0;
      const candidates = [];
      for (let i = h.length - 1; i >= 0; i--) {
        const m = h[i];
        if (m.role !== "tool") continue;
        if (cleared.has(m)) break;
        const t = toolOutputTokens(m);
        total += t;
        if (total > protect) {
          freed += t;
          candidates.push(m);
        }
      }
      const events = [];
      if (freed >= minimum) {
        for (const m of candidates) cleared.add(m);
        events.push("prune");
      }
      return { messages: cleared.size ? h.map((m) => (cleared.has(m) ? ph(m) : m)) : h, events };
    },
  };
}

/** Anthropic-style clear_tool_uses (server side): when the full request passes `trigger` input
 * tokens, every tool result but those of the last `keep` tool uses is replaced by a placeholder. */
function clearArm(task, cfg, window) {
  const { trigger, keep, placeholder } = cfg;
  const ph = placeholders(placeholder);
  let fixed = null;
  return {
    hasRecall: false,
    tools: task.tools,
    system: task.system,
    window,
    async prepare(h) {
      fixed ??= fixedTokens(cfg.model, task.tools);
      if (fixed + sumTokens(h) <= trigger) return { messages: h, events: [] };
      const uses = [];
      for (const m of h)
        if (m.role === "assistant") for (const c of m.tool_calls ?? []) uses.push(c.id);
      const kept = new Set(uses.slice(-keep));
      return {
        messages: h.map((m) => (m.role === "tool" && !kept.has(m.tool_call_id) ? ph(m) : m)),
        events: ["clear"],
      };
    },
  };
}

/** The mode a search answer's text says it used: `hybrid`, `fts` or `fts-busy` (full-text
 * because the embedder was computing the background backlog). */
export function searchModeOf(text) {
  if (/\(hybrid: /.test(text)) return "hybrid";
  return /embedder is busy/.test(text) ? "fts-busy" : "fts";
}

/** smarter-compact through the real engine (createCompactor), as a host would run it: the
 * standing instruction in the system prompt, the five tools registered, each request transformed
 * (at the simulated clock's time when the trial has one). `cfg.toml`: the user's config.toml.
 * `cfg.embedder`: the default configuration (the process-wide embedder when the model is
 * installed, embedding in the background); without it the arm runs with no embedder. Each
 * search's wall time and mode go to `stats.searches` as `[ms, mode]`. */
async function smarterArm(task, cfg, window, ctx) {
  const dir = join(ctx.stateRoot, `${task.id}-${task.seed}-${ctx.tag ?? "o"}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (cfg.toml) {
    mkdirSync(join(dir, "context"), { recursive: true });
    writeFileSync(configPath(dir), cfg.toml);
  }
  const c = await createCompactor({
    sessionId: `bench-${task.id}-${task.seed}`,
    stateDir: dir,
    embedder: cfg.embedder ? undefined : false,
    config: cfg.config ?? {},
  });
  const recallTools = (await toolDefinitions()).map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
  const tools = [...task.tools, ...recallTools];
  const system = { role: "system", content: `${task.system.content}\n\n${STANDING_INSTRUCTION}` };
  const overheadTokens = (await engineModule()).estimateTokens(JSON.stringify(tools));
  const stats = {
    trims: 0,
    coldTrims: 0,
    compressed: 0,
    failOpens: 0,
    overLimit: 0,
    searches: [],
  };
  return {
    hasRecall: true,
    tools,
    system,
    window,
    compactor: c,
    stats,
    async prepare(h, nowMs = null) {
      const { messages, stats: st } = await c.transform([system, ...h.slice(1)], {
        model: cfg.model,
        format: "openai",
        overheadTokens,
        ...(nowMs != null && { nowMs }),
      });
      const events = [];
      if (st.fail_open) {
        stats.failOpens++;
        events.push("fail-open");
      }
      if (st.trimmed) {
        stats.trims++;
        events.push("trim");
      }
      if (st.cache_cold) {
        stats.coldTrims++;
        events.push("cold");
      }
      if (st.compressed) {
        stats.compressed += st.compressed;
        events.push("compress");
      }
      if (st.over_limit) stats.overLimit++;
      return { messages, events, engineTokens: st.after_tokens };
    },
    async recall(name, args) {
      if (name !== "smart_compact_search") return runTool(c, name, args);
      const t0 = performance.now();
      const text = await runTool(c, name, args);
      stats.searches.push([performance.now() - t0, searchModeOf(text)]);
      return text;
    },
    async close() {
      await c.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Makes a kept subset a valid request: calls whose result left are removed from their message,
 * results whose call left are dropped. Returns the repaired list and how many repairs it took. */
export function repairPairs(msgs) {
  const results = new Set(msgs.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
  const calls = new Set();
  let repairs = 0;
  const out = [];
  for (const m of msgs) {
    if (m.role === "assistant" && m.tool_calls?.length) {
      const keep = m.tool_calls.filter((c) => results.has(c.id));
      for (const c of keep) calls.add(c.id);
      if (keep.length === m.tool_calls.length) out.push(m);
      else {
        repairs += m.tool_calls.length - keep.length;
        const copy = { ...m };
        if (keep.length) copy.tool_calls = keep;
        else delete copy.tool_calls;
        if (copy.tool_calls || copy.content) out.push(copy);
      }
    } else if (m.role === "tool") {
      if (calls.has(m.tool_call_id)) out.push(m);
      else repairs++;
    } else out.push(m);
  }
  return { messages: out, repairs };
}

/** compact_context (seed 000) at target_ratio 0.4, applied by the host whenever its running
 * history reaches the same trigger as smarter-compact; the result replaces the history (new
 * messages are appended to it), and its tool pairs are repaired so the request is valid. */
function compactContextArm(task, cfg, window) {
  let running = [];
  let consumed = 0;
  let fixed = null;
  const stats = { compactions: 0, repairs: 0, embedding: false };
  return {
    hasRecall: false,
    tools: task.tools,
    system: task.system,
    window,
    stats,
    async prepare(h) {
      fixed ??= fixedTokens(cfg.model, task.tools);
      running = running.concat(h.slice(consumed));
      consumed = h.length;
      const events = [];
      if (fixed + sumTokens(running) >= cfg.trigger) {
        const query = [...running].reverse().find((m) => m.role === "user")?.content ?? "";
        const res = await compactContext(
          { messages: running, query, target_ratio: cfg.target_ratio },
          { embedder: cfg.embedder ?? null },
        );
        const fixedUp = repairPairs(res.messages);
        running = fixedUp.messages;
        stats.compactions++;
        stats.repairs += fixedUp.repairs;
        stats.embedding ||= !!res.stats.embedding;
        events.push("compact");
      }
      return { messages: running, events };
    },
  };
}

/** The smarter-compact arm in the default configuration (embedder on); the bench runs it beside
 * the embedder-off arm and compares the two (bench/lib/report-embedder.mjs). */
export const EMBEDDER_ARM = "smarter-compact+embedder";
/** The same, the background embedding finished after each request (the trial's `ctx.settle`),
 * so its searches find the worker free and can be hybrid. */
export const SETTLED_ARM = "smarter-compact+embedder+settled";

/** Creates an arm for one trial. */
export async function createArm(name, task, config, ctx) {
  const a = config.arms;
  const w = config.window;
  switch (name) {
    case "keep":
      return keepArm(task, a.keep, w);
    case "keep-1m":
      return keepArm(task, a["keep-1m"], a["keep-1m"].window);
    case "opencode-prune":
      return pruneArm(task, a["opencode-prune"], w);
    case "clear_tool_uses":
      return clearArm(task, { ...a.clear_tool_uses, model: config.model }, w);
    case "smarter-compact":
      return smarterArm(task, { ...a["smarter-compact"], model: config.model }, w, ctx);
    case EMBEDDER_ARM:
    case SETTLED_ARM:
      return smarterArm(task, { ...a["smarter-compact"], model: config.model, embedder: true }, w, {
        ...ctx,
        tag: `${ctx.tag ?? "o"}-embedder`,
      });
    case "compact_context":
      return compactContextArm(task, { ...a.compact_context, model: config.model }, w);
    default:
      throw new Error(`unknown arm ${name}`);
  }
}
