// OpenCode's `{info, parts}` messages ↔ the engine. One OpenCode assistant message holds its
// tool calls *and* their results (a `tool` part), so it becomes an Anthropic assistant message
// plus a user message of tool_result blocks; both map back to the same OpenCode message and
// always leave or stay together. Only what the model sees goes into the canonical messages, so
// fingerprints ignore ids, times, tokens and cost. Edits are replayed on copies of OpenCode's
// objects; the plugin then splices the array in place (OpenCode ignores a new array).

/** The engine format the canonical messages are in. */
export const canonicalFormat = "anthropic";

/** Id of the text part carrying the pointer (any stable id works; OpenCode keeps part order). */
const POINTER_PART_ID = "prt_smarter_compact_pointer";

const isSigned = (p) => p.type === "reasoning" && p.metadata && Object.keys(p.metadata).length > 0;

/** What OpenCode sends the model for a tool part's result. */
function toolResult(part) {
  const s = part.state ?? {};
  if (s.status === "completed") return { text: s.time?.compacted ? "[Old tool result content cleared]" : String(s.output ?? ""), error: false };
  if (s.status === "error") return { text: String(s.error ?? ""), error: true };
  return { text: "[Tool execution was interrupted]", error: true };
}

function userBlocks(parts) {
  const blocks = [];
  let synthetic = true;
  for (const p of parts) {
    if (p.type === "text" && !p.ignored) {
      blocks.push({ type: "text", text: p.text });
      if (!p.synthetic) synthetic = false;
    } else if (p.type === "file") blocks.push({ type: "document", mime: p.mime, url: String(p.url ?? "").slice(0, 200) });
    else if (p.type === "compaction") blocks.push({ type: "text", text: "What did we do so far?" });
    else if (p.type === "subtask" || p.type === "agent") blocks.push({ type: "text", text: `[${p.type}] ${p.prompt ?? p.name ?? ""}` });
  }
  return { blocks, synthetic };
}

/** OpenCode messages → canonical Anthropic messages, and for each its OpenCode message index. */
export function toCanonical(messages) {
  const canonical = [];
  const hostIndex = [];
  messages.forEach((m, i) => {
    const parts = m?.parts ?? [];
    if (m?.info?.role === "user") {
      const { blocks, synthetic } = userBlocks(parts);
      canonical.push({ role: "user", content: blocks.length ? blocks : [{ type: "text", text: "" }], ...(synthetic ? { synthetic: true } : {}) });
      hostIndex.push(i);
      return;
    }
    const blocks = [];
    const results = [];
    for (const p of parts) {
      if (p.type === "reasoning") blocks.push({ type: "thinking", thinking: p.text ?? "", ...(isSigned(p) ? { signature: JSON.stringify(p.metadata) } : {}) });
      else if (p.type === "text" && !p.ignored) blocks.push({ type: "text", text: p.text });
      else if (p.type === "tool") {
        blocks.push({ type: "tool_use", id: p.callID, name: p.tool, input: p.state?.input ?? {} });
        const r = toolResult(p);
        results.push({ type: "tool_result", tool_use_id: p.callID, content: r.text, ...(r.error ? { is_error: true } : {}) });
      }
    }
    canonical.push({ role: "assistant", content: blocks.length ? blocks : [{ type: "text", text: "" }] });
    hostIndex.push(i);
    if (results.length) {
      canonical.push({ role: "user", content: results });
      hostIndex.push(i);
    }
  });
  return { canonical, hostIndex };
}

function applyEdit(m, edit) {
  const parts = m.parts ?? [];
  if (edit.compress) {
    const id = edit.compress.call_id;
    return {
      ...m,
      parts: parts.map((p) => {
        if (p.type !== "tool" || p.callID !== id) return p;
        const key = p.state?.status === "error" ? "error" : "output";
        return { ...p, state: { ...p.state, [key]: edit.compress.text } };
      }),
    };
  }
  if (edit.compress_text) {
    let n = -1;
    return { ...m, parts: parts.map((p) => (p.type === "text" && !p.ignored && ++n === edit.compress_text.nth ? { ...p, text: edit.compress_text.text } : p)) };
  }
  if (edit.prepend !== undefined) {
    const pointer = { type: "text", text: edit.prepend, synthetic: true, id: POINTER_PART_ID, sessionID: m.info?.sessionID, messageID: m.info?.id };
    return { ...m, parts: [pointer, ...parts] };
  }
  if (edit.strip_thinking) return { ...m, parts: parts.filter((p) => !isSigned(p)) };
  return m;
}

/** The rewritten OpenCode message list (kept messages are OpenCode's objects, edited ones copies). */
export function applyPlan(messages, plan, hostIndex) {
  const out = [];
  const edited = new Map();
  const push = (hi) => {
    if (out.at(-1) !== hi) out.push(hi);
  };
  for (const item of plan) {
    if (Array.isArray(item)) for (let c = item[0]; c < item[1]; c++) push(hostIndex[c]);
    else {
      const hi = hostIndex[item.i];
      edited.set(hi, item.e.reduce(applyEdit, edited.get(hi) ?? messages[hi]));
      push(hi);
    }
  }
  return out.map((hi) => edited.get(hi) ?? messages[hi]);
}
