// Real agent sessions as an agent host would send them: the converter for mini-swe-agent
// trajectories ({messages: [{role, content}]}) to OpenAI chat messages with structured tool
// calls, and the sequence of requests a host makes while the session runs.
import { readFileSync } from "node:fs";

const BASH = /```bash\s*\n([\s\S]*?)```/;

/** Converts a trajectory: the first ```bash block of an assistant message becomes a `bash` tool
 * call, and the next user message (normally `<returncode>…`) becomes its result. */
export function toOpenAI(raw) {
  const out = [];
  let pending = null;
  raw.forEach((m, i) => {
    const cmd = m.role === "assistant" ? BASH.exec(m.content) : null;
    if (cmd) {
      pending = `call_${i}`;
      const rest = m.content.replace(BASH, "").trim();
      out.push({
        role: "assistant",
        content: rest || null,
        tool_calls: [
          {
            id: pending,
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command: cmd[1].trim() }) },
          },
        ],
      });
    } else if (m.role === "user" && pending) {
      out.push({ role: "tool", tool_call_id: pending, content: m.content });
      pending = null;
    } else {
      if (m.role === "assistant") pending = null;
      out.push({ role: m.role, content: m.content });
    }
  });
  if (pending) out.pop(); // a call left without a result would make the history invalid
  return out;
}

/** The requests a host sends: the history before each assistant message, then the whole. */
export function requests(history) {
  const reqs = [];
  history.forEach((m, i) => {
    if (m.role === "assistant" && i > 0) reqs.push(history.slice(0, i));
  });
  reqs.push(history.slice());
  return reqs;
}

/** Reads a trajectory file: `{ id, history }`. */
export function loadSession(file) {
  const d = JSON.parse(readFileSync(file, "utf8"));
  return { id: d.instance_id ?? "session", history: toOpenAI(d.messages) };
}

/** Feeds a session to a compactor request by request; yields `{ request, messages, stats }`. */
export async function* replay(compactor, history, opts = {}) {
  for (const request of requests(history)) {
    const { messages, stats } = await compactor.transform(structuredClone(request), {
      format: "openai",
      ...opts,
    });
    yield { request, messages, stats };
  }
}
