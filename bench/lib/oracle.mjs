// The oracle agent: the same for every arm. It answers a question only from what the arm lets
// it see: the visible request (exact lines of the task's data tool), or, when the arm has recall
// tools, those tools called with a query derived mechanically from the question. Following the
// standing instruction ("before answering from anything you cannot see, search"), it recalls when
// the request shows that something is not in it (a trim pointer or a compressed-output header)
// and the answer may be there: always for a latest value or a count, for a line lookup only when
// the line is not visible. Lookups use smart_compact_search(<record key or line id>), counts
// smart_compact_sql(count(*)); it reads the tool's text answer as a model would. The test-log
// task's question ("which test failed?") is answered from the FAILED / stdout / panicked lines
// that name a test; when none is visible, it recalls with smart_compact_get(<the compressed
// output's id>, grep = TESTLOG_GREP), or smart_compact_search("FAILED") when no id is visible.
import { answerOf, failedNames } from "./testlog.mjs";

/** The grep of the test-log recall: the runners' failure words (the engine matches any case). */
export const TESTLOG_GREP = "FAIL|panicked|Error";
/** The id in a compressed-output header: `smart_compact_get(id="…")`. */
const OUTPUT_ID = /\[smarter-compact\] output compressed:[^\n]*?smart_compact_get\(id="([^"]+)"/;

const KV_LINE = /^PUT (rec-\d{6}) rev=\d+ (\{.*\})\s*$/;
const LOG_LINE = /^\S+ (L\d{6}) (\S+) (DEBUG|INFO|WARN|ERROR) .*?\breq=([0-9a-f]{8})\b/;

/** Data lines visible in a request: the results of the task's data tool, in order. */
function visibleLines(task, messages) {
  const prefix = `call_${task.tool}_`;
  const out = [];
  for (const m of messages) {
    if (m.role !== "tool" || !m.tool_call_id?.startsWith(prefix) || typeof m.content !== "string")
      continue;
    for (const line of m.content.split("\n")) out.push(line);
  }
  return out;
}

/** Answer from the visible request, or null when it does not show the answer. */
export function answerFromVisible(task, q, messages) {
  const lines = visibleLines(task, messages);
  if (task.kind === "testlog") {
    const names = failedNames(lines.join("\n"));
    return names.length ? answerOf(names) : null;
  }
  if (task.kind === "kv") {
    let value = null;
    for (const l of lines) {
      const m = KV_LINE.exec(l);
      if (m && m[1] === q.key) {
        try {
          value = JSON.parse(m[2]).value;
        } catch {
          // a line cut by a compressor is not readable
        }
      }
    }
    return value;
  }
  if (q.kind === "lookup") {
    for (const l of lines) {
      const m = LOG_LINE.exec(l);
      if (m && m[1] === q.key) return m[4];
    }
    return null;
  }
  const seen = new Set();
  for (const l of lines) {
    const m = LOG_LINE.exec(l);
    if (m && m[2] === q.service && m[3] === q.level) seen.add(m[1]);
  }
  return String(seen.size);
}

/** The tool call the oracle makes for a question (for an arm with recall tools). `visible`: the
 * request it sees (the test-log recall reads the compressed output's id there). */
export function recallCall(task, q, visible = []) {
  if (task.kind === "testlog") {
    const id = visibleLines(task, visible)
      .map((l) => OUTPUT_ID.exec(l)?.[1])
      .find(Boolean);
    return id
      ? { name: "smart_compact_get", args: { id, grep: TESTLOG_GREP } }
      : { name: "smart_compact_search", args: { query: "FAILED", limit: 8, scope: "all" } };
  }
  if (q.kind === "count") {
    return {
      name: "smart_compact_sql",
      args: {
        sql: `SELECT count(*) FROM output_lines WHERE tool_name = '${task.tool}' AND text LIKE '% ${q.service} ${q.level} %'`,
      },
    };
  }
  return { name: "smart_compact_search", args: { query: q.key, limit: 8, scope: "all" } };
}

/** Reads the answer out of the recall tool's text, or null. */
export function answerFromRecall(task, q, text) {
  if (task.kind === "testlog") {
    const names = failedNames(text);
    return names.length ? answerOf(names) : null;
  }
  if (q.kind === "count") {
    const m = /count\(\*\)\s*\n\s*(\d+)/.exec(text);
    return m ? m[1] : null;
  }
  // hits: "[k] message N · output of <tool> · line L · …" then the snippet on the next line
  const blocks = text.split(/\n(?=\[\d+\] )/);
  let best = null;
  for (const b of blocks) {
    const head = /^\[\d+\] message (\d+) · output of (\S+)(?: · line (\d+))?/.exec(b);
    if (!head || head[2] !== task.tool) continue;
    for (const line of b.split("\n").slice(1)) {
      const s = line.trim();
      let value = null;
      if (task.kind === "kv") {
        const m = KV_LINE.exec(s);
        if (m && m[1] === q.key) {
          try {
            value = JSON.parse(m[2]).value;
          } catch {
            value = null;
          }
        }
      } else {
        const m = LOG_LINE.exec(s);
        if (m && m[1] === q.key) value = m[4];
      }
      if (value === null) continue;
      const pos = [Number(head[1]), Number(head[3] ?? 0)];
      if (!best || pos[0] > best.pos[0] || (pos[0] === best.pos[0] && pos[1] > best.pos[1]))
        best = { pos, value };
    }
  }
  return best?.value ?? null;
}
