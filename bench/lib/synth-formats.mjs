// The synthetic coding session (bench/lib/synth.mjs, OpenAI format) in the other formats the
// hook is timed in: Anthropic Messages (one message per OpenAI message) and OpenCode's
// `{info, parts}` messages (an assistant message carries its tool call and its result in one
// `tool` part, so one OpenCode message per exchange). Each is converted once, so a request is a
// slice of the same objects, as a host that keeps its messages passes them.

/** The session as Anthropic messages (the system prompt left out: it is not a message there). */
export function anthropicOf(openai) {
  const out = [];
  for (const m of openai) {
    if (m.role === "system") continue;
    if (m.role === "tool") {
      out.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: m.tool_call_id, content: m.content }],
      });
    } else if (m.tool_calls) {
      out.push({
        role: "assistant",
        content: [
          { type: "text", text: m.content ?? "" },
          ...m.tool_calls.map((c) => ({
            type: "tool_use",
            id: c.id,
            name: c.function.name,
            input: JSON.parse(c.function.arguments),
          })),
        ],
      });
    } else out.push({ role: m.role, content: [{ type: "text", text: m.content ?? "" }] });
  }
  return out;
}

/** For each OpenAI prefix length k, the length of the converted prefix: `counts[k]`. */
function prefixCounts(openai, taken) {
  const counts = [0];
  let n = 0;
  for (let i = 0; i < openai.length; i++) {
    n += taken[i];
    counts.push(n);
  }
  return counts;
}

/** The session as OpenCode messages, with `counts[k]`: OpenCode messages of the first k OpenAI
 * messages (an exchange counts once its result is there). */
export function opencodeOf(openai) {
  const out = [];
  const taken = [];
  const session = "ses_bench";
  let t = 1_790_000_000_000;
  for (let i = 0; i < openai.length; i++) {
    const m = openai[i];
    const id = `msg_${String(i).padStart(7, "0")}`;
    const part = (p, k) => ({ ...p, id: `prt_${i}_${k}`, sessionID: session, messageID: id });
    if (m.role === "system" || m.role === "tool") {
      taken.push(0); // the system prompt is not a message; a result belongs to its call
      continue;
    }
    const info = { id, sessionID: session, role: m.role, time: { created: t++ } };
    if (m.tool_calls) {
      const result = openai[i + 1];
      const call = m.tool_calls[0];
      const input = JSON.parse(call.function.arguments);
      out.push({
        info: { ...info, finish: "tool-calls", modelID: "bench", providerID: "bench" },
        parts: [
          part({ type: "step-start" }, 0),
          part({ type: "text", text: m.content ?? "" }, 1),
          part(
            {
              type: "tool",
              tool: call.function.name,
              callID: call.id,
              state: {
                status: "completed",
                input,
                output: result?.content ?? "",
                metadata: { exit: 0, truncated: false },
                title: input.command ?? "",
                time: { start: t++, end: t++ },
              },
            },
            2,
          ),
          part({ type: "step-finish", reason: "tool-calls" }, 3),
        ],
      });
      taken.push(0);
      if (result?.role === "tool") {
        taken.push(1);
        i++;
      } else taken[taken.length - 1] = 1;
    } else {
      out.push({ info, parts: [part({ type: "text", text: m.content ?? "" }, 0)] });
      taken.push(1);
    }
  }
  return { messages: out, counts: prefixCounts(openai, taken) };
}

/** The request of the first `k` OpenAI messages in `format`, from a session converted once. */
export function sessionInFormat(openai, format) {
  if (format === "openai") return { at: (k) => openai.slice(0, k) };
  if (format === "anthropic") {
    const a = anthropicOf(openai);
    const skip = openai[0]?.role === "system" ? 1 : 0;
    return { at: (k) => a.slice(0, Math.max(0, k - skip)) };
  }
  if (format === "opencode") {
    const { messages, counts } = opencodeOf(openai);
    return { at: (k) => messages.slice(0, counts[k]) };
  }
  throw new Error(`no synthetic session in ${format}`);
}
