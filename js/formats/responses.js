// OpenAI Responses `input` items ↔ the engine. Consecutive items of one model turn (reasoning,
// an assistant message, function / custom tool calls) become one canonical assistant message,
// and the outputs that follow one canonical user message of tool_result blocks; a kept or
// dropped canonical message keeps or drops all its items together, so a reasoning item always
// travels with the call it precedes and calls stay paired with their outputs by call_id.
// Reasoning keeps its encrypted_content verbatim (it is only ever dropped whole).

/** The engine format the canonical messages are in. */
export const canonicalFormat = "anthropic";

const TURN_ITEMS = new Set(["reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "file_search_call", "computer_call", "image_generation_call", "code_interpreter_call", "mcp_call"]);
const OUTPUT_ITEMS = new Set(["function_call_output", "custom_tool_call_output", "local_shell_call_output", "computer_call_output"]);
/** User messages a client generates itself (Codex's environment and instructions). */
const SYNTHETIC_USER = /^\s*<(environment_context|user_instructions|user_shell_command)>/;

const kindOf = (item) => item?.type ?? (item?.role ? "message" : "unknown");
const partsText = (content) =>
  typeof content === "string" ? [content] : (content ?? []).filter((p) => typeof p?.text === "string").map((p) => p.text);
const outputText = (output) => (typeof output === "string" ? output : partsText(output).join("\n"));

/** Items → canonical messages, and for each canonical message the indices of its items. */
export function toCanonical(items) {
  const canonical = [];
  const hostIndex = [];
  let turn = null; // the canonical assistant message being filled, with its item indices
  let outputs = null;
  const close = () => {
    turn = null;
    outputs = null;
  };
  items.forEach((item, i) => {
    const kind = kindOf(item);
    const role = item?.role;
    if (kind === "message" && role === "assistant") {
      if (!turn || outputs) turn = newMessage("assistant");
      for (const t of partsText(item.content)) turn.msg.content.push({ type: "text", text: t });
      turn.items.push(i);
      return;
    }
    if (TURN_ITEMS.has(kind)) {
      if (!turn || outputs) turn = newMessage("assistant");
      if (kind === "reasoning") turn.msg.content.push({ type: "thinking", thinking: partsText(item.summary).join("\n"), ...(item.encrypted_content ? { signature: item.encrypted_content } : {}) });
      else if (kind === "function_call") turn.msg.content.push({ type: "tool_use", id: item.call_id, name: item.name, input: { arguments: item.arguments } });
      else if (kind === "custom_tool_call") turn.msg.content.push({ type: "tool_use", id: item.call_id, name: item.name, input: { input: item.input } });
      else if (kind === "local_shell_call") turn.msg.content.push({ type: "tool_use", id: item.call_id, name: "local_shell", input: item.action ?? {} });
      else turn.msg.content.push({ type: kind, item: JSON.stringify(item).slice(0, 2000) });
      turn.items.push(i);
      return;
    }
    if (OUTPUT_ITEMS.has(kind)) {
      if (!outputs) outputs = newMessage("user");
      outputs.msg.content.push({ type: "tool_result", tool_use_id: item.call_id, content: outputText(item.output) });
      outputs.items.push(i);
      return;
    }
    close();
    const text = partsText(item?.content);
    const msg = { role: role === "developer" || role === "system" ? "system" : role === "user" ? "user" : "assistant", content: text.map((t) => ({ type: "text", text: t })) };
    if (!msg.content.length) msg.content.push({ type: "text", text: "" });
    if (msg.role === "user" && text.length && SYNTHETIC_USER.test(text[0])) msg.synthetic = true;
    canonical.push(msg);
    hostIndex.push([i]);
  });
  return { canonical, hostIndex };

  function newMessage(role) {
    const m = { msg: { role, content: [] }, items: [] };
    canonical.push(m.msg);
    hostIndex.push(m.items);
    if (role === "assistant") outputs = null;
    return m;
  }
}

/** Applies one edit to the items of a canonical message (copies of the items it changes). */
function applyEdit(items, edit) {
  if (edit.compress) {
    return items.map((it) => (OUTPUT_ITEMS.has(kindOf(it)) && it.call_id === edit.compress.call_id ? { ...it, output: edit.compress.text } : it));
  }
  if (edit.compress_text) {
    let n = -1;
    return items.map((it) => {
      if (kindOf(it) !== "message" || !Array.isArray(it.content)) return it;
      return { ...it, content: it.content.map((p) => (typeof p?.text === "string" && ++n === edit.compress_text.nth ? { ...p, text: edit.compress_text.text } : p)) };
    });
  }
  if (edit.prepend !== undefined) {
    return items.map((it, k) => {
      if (k !== 0) return it;
      const part = { type: "input_text", text: edit.prepend };
      const content = typeof it.content === "string" ? [part, { type: "input_text", text: it.content }] : [part, ...(it.content ?? [])];
      return { ...it, content };
    });
  }
  if (edit.strip_thinking) return items.filter((it) => kindOf(it) !== "reasoning");
  return items;
}

/** The rewritten item list: kept items are the client's own objects, edited ones copies. */
export function applyPlan(items, plan, hostIndex) {
  const out = [];
  for (const entry of plan) {
    if (Array.isArray(entry)) {
      for (let c = entry[0]; c < entry[1]; c++) for (const i of hostIndex[c]) out.push(items[i]);
    } else {
      out.push(...entry.e.reduce(applyEdit, hostIndex[entry.i].map((i) => items[i])));
    }
  }
  return out;
}
