// The real-sessions section (estimator error by content kind, replay at several trim_at) and
// the real-model section (with its offline check against the scripted endpoint).
import { armLabel, f2, pctf, sgn, table, taskLabel, tok } from "./format.mjs";
import { LARGE_MESSAGE_TOKENS, LARGE_REQUEST_TOKENS } from "./real-sessions.mjs";
import { FRAMING_TOKENS } from "./tokens.mjs";

/** The estimator's error by content kind (deterministic). */
export function estimatorTable(rs) {
  const big = `≥ ${LARGE_MESSAGE_TOKENS} tok`;
  return table(
    [
      "kind",
      "messages",
      "true tokens",
      "estimated",
      "bias",
      "mean abs error",
      `p90 abs error (${big})`,
      `signed error p5 … p95 (${big})`,
    ],
    rs.estimator.map((r) => [
      r.kind === "all" ? "**all**" : r.kind,
      String(r.n),
      tok(r.truth),
      tok(r.est),
      `${r.bias >= 0 ? "+" : ""}${r.bias.toFixed(1)}%`,
      `${r.mae.toFixed(1)}%`,
      `${(r.p90 ?? 0).toFixed(1)}%`,
      `${sgn(r.p5 ?? 0)} … ${sgn(r.p95 ?? 0)}`,
    ]),
  );
}

/** The whole-request error line (deterministic). */
export function requestErrorLine(rs) {
  const e = rs.requestError;
  return `Whole requests (${e.text.n} requests of ≥ ${LARGE_REQUEST_TOKENS} tokens, the engine's \`before_tokens\`): against o200k of what the model reads (message texts, tool names and arguments, ${FRAMING_TOKENS} tokens of framing per message) the estimate is ${sgn(e.text.bias)} overall, median ${sgn(e.text.p50)}, p5 … p95 ${sgn(e.text.p5)} … ${sgn(e.text.p95)}; against o200k of the JSON-serialised request (what the cost tables count: JSON escaping adds tokens) it is ${sgn(e.json.bias)}, p5 … p95 ${sgn(e.json.p5)} … ${sgn(e.json.p95)}.`;
}

/** The replay at several trim_at (deterministic). */
export function replayTable(rs, prices) {
  const keys = Object.keys(prices);
  return table(
    [
      "trim_at",
      "requests",
      "trims",
      "outputs compressed",
      "reduction (all tokens)",
      "median reduction per session",
      "prefix reuse (non-trim requests)",
      "cache hit (keep)",
      "peak (keep)",
      ...keys.map((k) => `cost ÷ keep, ${prices[k].label}`),
      "over the limit (minimum kept)",
    ],
    rs.replay.map((r) => [
      tok(r.trimAt),
      String(r.requests),
      String(r.trims),
      String(r.compressed),
      pctf(r.reduction, 1),
      pctf(r.reductionMedian, 1),
      `${pctf(r.prefixReuse, 1)} (${r.reused}/${r.reusable})`,
      `${pctf(r.hit)} (${pctf(r.hitKeep)})`,
      `${tok(r.peak)} (${tok(r.peakKeep)})`,
      ...keys.map((k) => f2(r.costRatio[k])),
      String(r.overLimit),
    ]),
  );
}

export function realSessionsSection(rs, prices) {
  const L = [`## Real sessions`, ""];
  L.push(
    `The ${rs.sessions} real coding-agent sessions of \`tests/data/sessions/swe-traj/\` (mini-swe-agent, SWE-bench Verified; converted to OpenAI tool calls by \`npm/js/sessions.js\`).`,
  );
  L.push("");
  L.push(`### Token estimate vs o200k_base, by content kind`);
  L.push("");
  L.push(
    `Each message split the way the engine sees it (the split of \`tests/token_estimate.rs\`: assistant prose, the bash command as JSON tool-call arguments, tool outputs classified as code / logs / JSON, system and task text), counted with js-tiktoken o200k_base and with the engine's estimator (\`estimateTokens\` of the wasm module). Bias = Σ estimate ÷ Σ true − 1; errors per message; p5/p95 of the signed error and p90 of the absolute error over messages of ≥ ${LARGE_MESSAGE_TOKENS} tokens.`,
  );
  L.push("");
  L.push(estimatorTable(rs));
  L.push("");
  L.push(
    `${requestErrorLine(rs)} The estimator leans high on purpose (trimming a little early is safe, late is not).`,
  );
  L.push("");
  L.push(`### Replay at several trim_at`);
  L.push("");
  L.push(
    `Every session replayed request by request through \`createCompactor\` (one request per assistant turn, as the host sends them), against keep-everything (the requests as sent). Reduction = 1 − tokens sent ÷ tokens of the original requests (o200k, serialised); prefix reuse = requests without a new trim whose sent request starts with the previous sent request byte for byte; cache hit and cost from the same cache simulation as above.`,
  );
  L.push("");
  L.push(replayTable(rs, prices));
  L.push("");
  return L.join("\n");
}

export function realModelSection(mock, real, config) {
  const rm = config.realModel;
  const L = [`## Real-model mode`, ""];
  L.push(
    `The same tasks with a real model as the answering agent, through any OpenAI-compatible Chat Completions endpoint. It never runs by default (not in CI, not in \`make bench\` without the variables):`,
  );
  L.push("");
  L.push("```sh");
  L.push(`BENCH_BASE_URL=https://api.example.com/v1 BENCH_MODEL=some-model BENCH_API_KEY=… \\`);
  L.push(`  BENCH_TASKS=log-L1600,log-L6400 BENCH_SEEDS=1 BENCH_ARMS=smarter-compact,keep \\`);
  L.push(`  node bench/run.mjs --only=mechanism`);
  L.push("```");
  L.push("");
  L.push(
    `The data pages and the assistant steps between them stay scripted (identical for every arm, and no model cost for the reading phase); at each question the arm's request goes to the model with the arm's tools (\`temperature\` ${rm.temperature}, \`max_tokens\` ${rm.maxTokens}; bench/config.json \`realModel\`). smarter-compact's recall tools are executed by the real engine (up to ${rm.maxRounds} rounds); the data tool answers that the stream was consumed; other tools are unavailable. A lookup scores if the answer contains the expected value, a count if its first number equals the expected count. Results go to \`bench/out/real-model.json\` and into this section, with the provider's own usage (prompt, cached and completion tokens). \`BENCH_TASKS\`, \`BENCH_SEEDS\` (default: the first seed) and \`BENCH_ARMS\` narrow the run. Requests over the provider's window come back as errors and count as unanswered.`,
  );
  L.push("");
  if (real) {
    L.push(`**Real model** (${real.model}, ${real.at?.slice(0, 10) ?? ""}):`);
    L.push("");
    L.push(
      table(
        [
          "task",
          "seed",
          "arm",
          "score",
          "lookup",
          "count",
          "requests to the model",
          "prompt tokens (provider)",
          "cached (provider)",
        ],
        real.trials.map((t) => [
          taskLabel(t.task),
          String(t.seed),
          armLabel(t.arm, config),
          f2(t.score),
          f2(t.lookup),
          f2(t.count),
          String(t.usage?.requests ?? "–"),
          tok(t.usage?.prompt ?? 0),
          tok(t.usage?.cached ?? 0),
        ]),
      ),
    );
    L.push("");
  } else L.push(`No real-model results in this report (the variables were not set).`);
  L.push("");
  if (mock) {
    L.push(
      `Offline check of the mode's plumbing (run by \`make bench\`): the small quick tasks answered through a scripted OpenAI-compatible endpoint on 127.0.0.1 that reads the request like the oracle and calls smart_compact_search / smart_compact_sql when offered — ${mock.trials.length} trials, scores ${mock.trials
        .map((t) => `${armLabel(t.arm, config)} ${f2(t.score)}`)
        .slice(0, 6)
        .join(", ")}${mock.trials.length > 6 ? ", …" : ""} (all in bench/mechanism-tables.md).`,
    );
    L.push("");
  }
  return L.join("\n");
}
