// The method section and the notes under "where smarter-compact is behind". Every number in
// these sentences comes from the bench config, the modules' constants or the facts computed at
// report time (bench/lib/report-facts.mjs).
import { armLabel, pctf, range, size, taskLabel, tierText, word } from "./format.mjs";

const k1 = (x) => `${(x / 1000).toFixed(1)}k`;
import { COUNT_LEVELS, LARGE_PAGE, SERVICES } from "./tasks.mjs";
import { TESTLOG_GREP } from "./oracle.mjs";
import { EDGE, TESTLOG_TOOL } from "./testlog.mjs";

export const BEHIND_NOTES = `Reading these rows: the oracle is a perfect reader, so an arm that keeps everything the question needs in the request answers every question right here, even where a real model would not. smarter-compact pays for its recall in requests: every question whose answer may sit outside the request costs one more round trip carrying the whole request, and its tool definitions and standing instruction ride on every request (the per-task figure is in the table). A trim re-writes the cache once from the task turn on.`;

/** Pages of a kind: "50 operations (mean 2.6k o200k tokens)", over the kind's tasks. */
function pagesText(facts, kind, unit) {
  const ps = Object.values(facts.pages).filter((p) => p.kind === kind);
  if (!ps.length) return null;
  const sizes = [...new Set(ps.map((p) => p.pageSize))].join("/");
  const means = ps.map((p) => p.normalTokens);
  return `${sizes} ${unit} (${kind}, mean ${range(Math.min(...means), Math.max(...means), k1)} o200k tokens)`;
}

function largeText(facts, compressOver) {
  const ps = Object.values(facts.pages).filter((p) => p.largeTokens);
  if (!ps.length) return "";
  const lo = Math.min(...ps.map((p) => p.largeTokens[0]));
  const hi = Math.max(...ps.map((p) => p.largeTokens[1]));
  const estMin = Math.min(...ps.map((p) => p.largeEstMin));
  const over =
    estMin > compressOver
      ? `all over smarter-compact's compression threshold of ${compressOver} tokens by the engine's estimate`
      : `the smallest ${estMin} tokens by the engine's estimate, against smarter-compact's compression threshold of ${compressOver}`;
  return `; every ${ordinal(LARGE_PAGE.every)} page is a large output of ${LARGE_PAGE.min}–${LARGE_PAGE.max} entries (${k1(lo)}–${k1(hi)} o200k tokens at the first seed, ${over})`;
}

/** The test-log task's sentence, or "" when the run has none. */
function testlogText(config, facts) {
  const ts = config.tasks.filter((t) => t.kind === "testlog");
  if (!ts.length) return "";
  const sizes = ts
    .map((t) => {
      const p = facts.pages[t.id];
      return `${taskLabel(t.id)}: ${p.outputLines} lines, ${k1(p.outputTokens)} o200k tokens`;
    })
    .join("; ");
  const fails = [...new Set(ts.map((t) => t.failures ?? 1))].join("/");
  const distract = [...new Set(ts.map((t) => t.distractors ?? 0))].join("/");
  return ` *test log T*: one \`${TESTLOG_TOOL}\` call (after a \`read_file\` of the script) returns the whole run of a monorepo's test suites, drawn to a budget of T lines: five to eight cargo test, pytest -v and jest --verbose suites one after the other, with compile lines, warnings, console noise and each runner's summary (the outputs at the first seed: ${sizes}). ${fails === "1" ? "One test fails" : `${fails} tests fail`} in the middle suites; every line that names a failing test (FAILED, panicked, the stdout and short-summary lines) sits outside the first and last ${pctf(EDGE)} of the output's lines (the generator draws again from its seeded stream until it does), so no head-and-tail cut shows it. Passing tests have "error", "failure" or "panic" in their names (the spec's \`distractors\`: ${distract}, the expected number per run before names that collide in a large suite are drawn again, which draws more), so a word search alone does not find the failure. The one question asks which test failed; the answer is the test's full name as its runner printed it.`;
}

const ordinal = (n) =>
  `${n}${n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th"}`;

export function methodSection(config, facts) {
  const c = config;
  const a = config.arms;
  const pr = config.prices.models;
  const e = facts.engine;
  const scTrim = e.trimAt[c.model];
  const kv = c.tasks.find((t) => t.kind === "kv");
  const wide = a[config.baseline]?.window;
  const modelWindows = Object.values(pr).filter((p) => p.contextWindow);
  const windowNote = modelWindows.length
    ? modelWindows.every((p) => p.contextWindow === wide)
      ? ` (equal to the listed context window of ${modelWindows.map((p) => p.label).join(" and ")}, an input of bench/config.json with the prices)`
      : ` (listed context windows, inputs of bench/config.json: ${modelWindows.map((p) => `${p.label} ${size(p.contextWindow)}`).join(", ")})`
    : "";
  const cc = a.compact_context;
  const ccTrigger =
    cc.trigger === scTrim
      ? `the number of smarter-compact's trim_at as its trigger (${size(cc.trigger)}, here an o200k count)`
      : `a trigger of ${size(cc.trigger)} (o200k count; smarter-compact's trim_at is ${size(scTrim)})`;
  const pages = [pagesText(facts, "kv", "operations"), pagesText(facts, "log", "lines")]
    .filter(Boolean)
    .join(" or ");
  const tools = facts.recallTools;
  return `## Method

**Tasks** (\`bench/lib/tasks.mjs\`, seeded by task id and seed). *kv-store R*: R records written through PUT lines (${kv ? `${pctf(kv.updatedFraction)} of the records are updated so that they get ${kv.writesUpdated[0]}–${kv.writesUpdated[1]} writes in all, at random times` : "some records are updated several times"}), read page by page with \`read_records\`; questions ask for the **latest** \`value\` of updated records. *log-triage L*: L log lines of ${SERVICES.length} services with per-service level mixes, read with \`read_logs\`; *lookup* questions ask for the \`req=\` id of one line, *count* questions for the number of ${COUNT_LEVELS.join(" or ")} lines of one service over the whole log.${testlogText(c, facts)} Pages are ${pages}${largeText(facts, e.compressOver)}. A session is: system prompt, the task turn, then per page an assistant message (a short sentence + the tool call) and the tool result, an assistant message saying the reading is done, then each question as its own user turn followed by the answer. Sizes: ${c.tasks.map((t) => `${taskLabel(t.id)} (${t.kind === "kv" ? `${t.records} records` : t.kind === "testlog" ? `a budget of ${t.lines} lines` : `${t.lines} lines`})`).join(", ")}; seeds ${c.seeds.join(", ")}.

**Driving**: the host's history holds everything; before each model call (after the task turn, after each tool result, after each question or recall result) the arm turns the history into the request, which is counted and cached as below. Then the provider's **${size(c.window)} context window** applies to every arm but ${armLabel(config.baseline, config)}: a request over it loses whole tool exchanges from the oldest end (system prompt and task turn stay) — a sliding window, so the prefix after the task turn changes on every such request.

**Arms** (\`bench/lib/arms.mjs\`):
- **smarter-compact**: the real engine through \`createCompactor\` (FTS only, no embedder), model \`${c.model}\` so the per-model table applies (trim_at ${size(scTrim)}, trim_to_fraction ${e.trimToFraction}, compress_over ${e.compressOver}: the engine's settings for this arm's options, read from the engine), the standing instruction appended to the system prompt and its ${word(tools.length)} tool definitions (${tools.map((t) => `\`${t}\``).join(", ")}) added to the tool list (all counted), the tool list's estimate passed as \`overheadTokens\`.
- **${armLabel("compact_context", config)}**: seed 000's \`compactContext\` (no embedder: recency + structural scores) applied when the running request reaches ${ccTrigger}; its kept subset replaces the history and new messages are appended to it. Its output can keep a tool call without its result (or the reverse), which no provider accepts; the arm repairs the pairs (drops the orphan calls/results) and counts the repairs.
- **OpenCode-style prune**: before every request, walking back from the newest tool output, the first ${size(a["opencode-prune"].protect)} tokens of tool output are protected; older outputs are replaced by \`${a["opencode-prune"].placeholder}\` once at least ${size(a["opencode-prune"].minimum)} tokens can be freed; cleared outputs stay cleared. (OpenCode itself prunes only between turns and spares the latest turns, then falls back to an LLM summary when the window overflows; this arm is the prune rule applied as eagerly as possible, without the summary.)
- **Anthropic-style clear_tool_uses**: server-side context editing with trigger ${size(a.clear_tool_uses.trigger)} input tokens and keep ${a.clear_tool_uses.keep} tool uses, without a clear_at_least minimum: whenever the full request is over the trigger, every tool result but the last ${a.clear_tool_uses.keep} becomes \`${a.clear_tool_uses.placeholder}\` (the tool calls stay).
- **keep everything**: the history as is, under the ${size(c.window)} window (${armLabel("keep", config)}); and the same with a ${size(wide)} window (${armLabel(config.baseline, config)}${windowNote}), the **baseline** of the headline.

**Oracle agent** (\`bench/lib/oracle.mjs\`), the same for every arm. It reads the data lines of the request (the results of the task's data tool, as sent by the arm): for a lookup the last visible write of the record / the visible line, for a count the number of distinct visible lines of that service and level. An arm with recall tools (smarter-compact) follows its standing instruction: when the request shows that something is not in it (the trim pointer or a compressed-output header), the oracle calls \`smart_compact_search(<record key or line id>, scope "all")\` for a kv lookup or a log line that it cannot see, and \`smart_compact_sql("SELECT count(*) FROM output_lines WHERE tool_name = '<data tool>' AND text LIKE '% <service> <LEVEL> %'")\` for a count, and reads the tool's text answer (for a record, the hit of the highest message and line number). For the test log it answers from the visible lines that name a failing test (pytest's \`… FAILED\` and \`FAILED …\`, cargo's \`test … ... FAILED\`, \`---- … stdout ----\` and \`thread '…' panicked at\`, a compressed output's \`[line N]\` prefix allowed); when the request shows something is left out and no such line is visible, it calls \`smart_compact_get(<the id in the compressed output's header>, grep "${TESTLOG_GREP}")\` (the engine matches any case, so the passing tests with failure words come back too) and reads the same lines out of the answer. Each recall is a real tool exchange: an assistant message with the call, the tool's result, and one more request, all counted. No other arm has recall tools. An answer is right if it equals the expected value.

**Accounting** (\`bench/lib/meter.mjs\`, \`bench/lib/tokens.mjs\`): tokens are js-tiktoken ${facts.tiktoken} **o200k_base** on the JSON serialisation of each request (\`{model, tools, messages}\`), summed per message (checked against encoding whole requests, see the details). Prompt-cache simulation: tools and system prompt first (Anthropic's render order), a cache breakpoint at the end of each request; a request reads from the cache the longest prefix it shares with the previous request, message by message and byte for byte, if that prefix is at least ${c.cache.minPrefix} tokens; everything after it is written to the cache (the simulation never expires an entry). Reads cost ${c.cache.read}× and writes ${c.cache.write}× the input price. Output tokens = the assistant messages (scripted steps and answers). Cache hit rate = cache reads ÷ all prompt tokens. Prices, inputs of bench/config.json (${config.prices.asOf}, ${config.prices.source}): ${Object.values(
    pr,
  )
    .map((p) => `**${p.label}** ${tierText(p)}`)
    .join(
      "; ",
    )}. Claude's own tokenizer counts differently from o200k, so dollar figures are comparative, not a forecast of a bill.

**What the oracle does not measure**: whether a model finds and uses what is in its context, nor the effect of the pointer and the standing instruction on a real model's behaviour — the real-model mode below does.
`;
}
