// A scripted OpenAI-compatible endpoint for checking real-model mode offline (`--mock-model`):
// it answers from the request it receives the way the oracle does, calling
// smart_compact_search / smart_compact_sql / smart_compact_get (the test log's grep) when they
// are offered and the answer is not visible.
import { createServer } from "node:http";
import { TESTLOG_GREP } from "./oracle.mjs";
import { answerOf, failedNames } from "./testlog.mjs";

const LOG = /\b(L\d{6}) (\S+) (DEBUG|INFO|WARN|ERROR) .*?\breq=([0-9a-f]{8})\b/g;

function answer(messages, tools) {
  const text = messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
  const last = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const lastMsg = messages[messages.length - 1];
  const canRecall = tools?.some((t) => t.function?.name === "smart_compact_search");
  if (/^Which tests? failed/.test(last)) {
    const names = failedNames(text);
    if (names.length) return { content: answerOf(names) };
    const id = /output compressed:[^\n]*?smart_compact_get\(id="([^"]+)"/.exec(text)?.[1];
    if (canRecall && lastMsg.role !== "tool" && id)
      return { tool: "smart_compact_get", args: { id, grep: TESTLOG_GREP } };
    return { content: "unknown" };
  }
  let m = /line (L\d{6})/.exec(last);
  if (m) {
    const hit = new RegExp(`${m[1]} \\S+ \\S+ .*?req=([0-9a-f]{8})`).exec(text);
    if (hit) return { content: hit[1] };
    if (canRecall && lastMsg.role !== "tool")
      return { tool: "smart_compact_search", args: { query: m[1], scope: "all" } };
    return { content: "unknown" };
  }
  m = /record (rec-\d{6})/.exec(last);
  if (m) {
    if (canRecall && lastMsg.role !== "tool" && text.includes("[smarter-compact]"))
      return { tool: "smart_compact_search", args: { query: m[1], scope: "all" } };
    const all = [...text.matchAll(new RegExp(`PUT ${m[1]} rev=(\\d+) .*?"value":"([^"]+)"`, "g"))];
    all.sort((a, b) => Number(a[1]) - Number(b[1]));
    return { content: all.length ? all[all.length - 1][2] : "unknown" };
  }
  m = /How many (\w+) lines did the service (\S+) log/.exec(last);
  if (m) {
    if (canRecall && lastMsg.role !== "tool")
      return {
        tool: "smart_compact_sql",
        args: {
          sql: `SELECT count(*) FROM output_lines WHERE tool_name = 'read_logs' AND text LIKE '% ${m[2]} ${m[1]} %'`,
        },
      };
    if (lastMsg.role === "tool") {
      const n = /count\(\*\)\s*\n\s*(\d+)/.exec(lastMsg.content);
      if (n) return { content: n[1] };
    }
    const ids = new Set();
    for (const x of text.matchAll(LOG)) if (x[2] === m[2] && x[3] === m[1]) ids.add(x[1]);
    return { content: String(ids.size) };
  }
  return { content: "ok" };
}

/** Starts the mock on 127.0.0.1; resolves to {url, close}. */
export function startMockModel() {
  let n = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const j = JSON.parse(body);
      const a = answer(j.messages, j.tools);
      const message = a.tool
        ? {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: `mock_${n++}`,
                type: "function",
                function: { name: a.tool, arguments: JSON.stringify(a.args) },
              },
            ],
          }
        : { role: "assistant", content: a.content };
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          choices: [{ message }],
          usage: { prompt_tokens: Math.round(body.length / 4), completion_tokens: 5 },
        }),
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() }),
    ),
  );
}
