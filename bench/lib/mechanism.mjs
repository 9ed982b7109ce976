// One trial: a task driven request by request through one arm, then its questions answered by
// the oracle (default) or by a real model (real-model mode).
import { createArm, fitWindow } from "./arms.mjs";
import { Meter, totals } from "./meter.mjs";
import { answerFromRecall, answerFromVisible, recallCall } from "./oracle.mjs";
import { checkRequest, fixedTokens, messageTokens } from "./tokens.mjs";

/** Runs one trial. `model`: null for the oracle, or a real-model client (lib/realmodel.mjs).
 * `ctx.clock` (optional): a simulated clock, `{startMs, ttlMs, gaps}` with the gaps of
 * `idleGaps()` (lib/tasks.mjs); each request then carries its time to the arm and the meter,
 * whose cache expires after `ttlMs`. Without it the arm sees the real clock and the cache never
 * expires. */
export async function runTrial(task, armName, config, ctx, model = null) {
  const arm = await createArm(armName, task, config, ctx);
  const fixed = fixedTokens(config.model, arm.tools);
  const clock = ctx.clock ?? null;
  const meter = new Meter(fixed, config.cache, { ttlMs: clock?.ttlMs ?? null });
  meter.keepPeak = !!ctx.check;
  const hist = [task.system, task.task];
  const hookMs = [];
  let windowDrops = 0;
  let now = clock?.startMs ?? null;
  const send = async (gapMs = 0) => {
    if (now != null) now += gapMs;
    const t0 = performance.now();
    const { messages, events, engineTokens } = await arm.prepare(hist, now);
    hookMs.push(performance.now() - t0);
    // The model answers after the background embedding of what this request stored is done.
    if (ctx.settle) await arm.compactor?.settled();
    const fit = fitWindow(messages, fixed, arm.window);
    if (fit.dropped) {
      windowDrops++;
      events.push("window");
    }
    const row = meter.request(fit.messages, events, now);
    if (engineTokens != null) row.engine = engineTokens; // the engine's count of what it sent
    return fit.messages;
  };
  const gaps = clock?.gaps ?? null;
  const reply = (m) => {
    hist.push(m);
    meter.output(messageTokens(m));
  };
  try {
    for (const [i, step] of task.steps.entries()) {
      await send(gaps?.loop[i]);
      reply(step.assistant);
      hist.push(step.result);
    }
    await send(gaps?.loop[task.steps.length]);
    reply(task.done);
    const answers = [];
    for (const [k, q] of task.questions.entries()) {
      hist.push({ role: "user", content: q.text });
      // the question's first request after the user's gap, any later one (a recall) after the tool's
      let first = true;
      const sendQ = () => {
        const gap = first ? gaps?.questions[k] : gaps?.recall;
        first = false;
        return send(gap);
      };
      const a = model
        ? await modelAnswer(task, q, k, arm, sendQ, reply, hist, model)
        : await oracleAnswer(task, q, k, arm, sendQ, reply, hist);
      answers.push({
        kind: q.kind,
        key: q.key ?? `${q.service} ${q.level}`,
        expected: q.answer,
        ...a,
      });
    }
    const rows = meter.rows;
    return {
      task: task.id,
      seed: task.seed,
      arm: armName,
      answers,
      rows,
      totals: totals(rows),
      windowDrops,
      hookMs,
      fixed,
      armStats: arm.stats ?? null,
      check:
        ctx.check && meter.peakMessages
          ? checkRequest(config.model, arm.tools, meter.peakMessages)
          : null,
    };
  } finally {
    await arm.close?.();
  }
}

/** Whether the oracle must recall: the arm shows that something is not in the request (a trim
 * pointer or a compressed-output header), and the question is not a unique line it can see (a
 * log line, or for the test log a line naming a failing test). */
export function needsRecall(task, q, visible) {
  const missing = visible.some(
    (m) =>
      typeof m.content === "string" &&
      (m.content.includes("[smarter-compact] This session continues") ||
        m.content.includes("[smarter-compact] output compressed")),
  );
  if (!missing) return false;
  if ((task.kind === "log" && q.kind === "lookup") || task.kind === "testlog")
    return answerFromVisible(task, q, visible) == null;
  return true;
}

async function oracleAnswer(task, q, k, arm, send, reply, hist) {
  let visible = await send();
  let answer = null;
  let tool = null;
  if (arm.hasRecall && needsRecall(task, q, visible)) {
    const call = recallCall(task, q, visible);
    const id = `call_recall_${k}`;
    reply({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.args) },
        },
      ],
    });
    let text;
    try {
      text = await arm.recall(call.name, call.args);
    } catch (e) {
      text = `error: ${e.message}`;
    }
    hist.push({ role: "tool", tool_call_id: id, content: text });
    visible = await send();
    answer = answerFromRecall(task, q, text);
    tool = call.name;
  }
  const from = answer != null ? "tool" : "visible";
  if (answer == null) answer = answerFromVisible(task, q, visible);
  reply({ role: "assistant", content: answer ?? "I cannot find it in what I can see." });
  return { answer, ok: answer === q.answer, tool, from };
}

const RECALL = new Set([
  "smart_compact_search",
  "smart_compact_sql",
  "smart_compact_get",
  "context_status",
  "compact_context",
]);

/** Scores a model's free-text answer. */
export function scoreText(q, text) {
  const t = String(text ?? "");
  if (q.kind === "count") return (/-?\d[\d,]*/.exec(t)?.[0] ?? "").replace(/,/g, "") === q.answer;
  return t.toLowerCase().includes(q.answer.toLowerCase());
}

async function modelAnswer(task, q, k, arm, send, reply, hist, model) {
  const calls = [];
  for (let round = 0; round < model.maxRounds; round++) {
    const visible = await send();
    const msg = await model.complete(visible, arm.tools);
    if (msg.tool_calls?.length && round < model.maxRounds - 1) {
      reply({ role: "assistant", content: msg.content ?? null, tool_calls: msg.tool_calls });
      for (const c of msg.tool_calls) {
        let args = {};
        try {
          args = JSON.parse(c.function?.arguments || "{}");
        } catch {
          args = null;
        }
        const name = c.function?.name;
        calls.push(name);
        let text;
        if (!args) text = "error: the arguments are not valid JSON";
        else if (arm.hasRecall && RECALL.has(name)) {
          try {
            text = await arm.recall(name, args);
          } catch (e) {
            text = `error: ${e.message}`;
          }
        } else if (name === task.tool)
          text =
            "error: the data stream has been consumed; pages cannot be read again. Answer from what you have.";
        else text = `error: ${name} is not available in this task.`;
        hist.push({ role: "tool", tool_call_id: c.id, content: text });
      }
      continue;
    }
    const text = msg.content ?? "";
    reply({ role: "assistant", content: text });
    return {
      answer: text.slice(0, 200),
      ok: scoreText(q, text),
      tool: calls.join(",") || null,
      from: "model",
    };
  }
  reply({ role: "assistant", content: "(no answer)" });
  return { answer: null, ok: false, tool: calls.join(",") || null, from: "model" };
}

/** Mean of booleans. */
export const rate = (xs) => (xs.length ? xs.filter(Boolean).length / xs.length : null);

/** Scores of a trial: lookup, count (null when the task has none) and overall (mean of the kinds). */
export function scores(trial) {
  const lookup = rate(trial.answers.filter((a) => a.kind === "lookup").map((a) => a.ok));
  const count = rate(trial.answers.filter((a) => a.kind === "count").map((a) => a.ok));
  const parts = [lookup, count].filter((x) => x != null);
  return { lookup, count, score: parts.reduce((s, x) => s + x, 0) / parts.length };
}
