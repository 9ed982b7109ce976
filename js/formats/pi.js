// Pi's agent messages ↔ the engine. Pi's `context` event gives user / assistant / toolResult
// messages (plus custom and summary messages that Pi turns into user text); they map one to one
// onto OpenAI chat messages holding only what the model sees, so fingerprints ignore timestamps
// and usage. The engine's edits are then replayed on copies of Pi's own objects.

/** The engine format the canonical messages are in. */
export const canonicalFormat = "openai";

const textOf = (content) =>
  typeof content === "string" ? content : (content ?? []).filter((b) => b?.type === "text").map((b) => b.text).join("\n");

/** User content as OpenAI parts (images kept as a marker, never their bytes). */
function userContent(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((b) =>
    b?.type === "image" ? { type: "image", mime: b.mimeType, bytes: b.data?.length ?? 0 } : { type: "text", text: String(b?.text ?? "") },
  );
}

/** The text Pi sends for its own message kinds (custom, bash, summaries). */
function syntheticText(m) {
  switch (m.role) {
    case "bashExecution":
      return `Ran \`${m.command ?? ""}\`\n${m.output ?? ""}`;
    case "branchSummary":
    case "compactionSummary":
      return String(m.summary ?? "");
    default:
      return typeof m.content === "string" ? m.content : textOf(m.content) || JSON.stringify(m);
  }
}

function toCanonicalOne(m) {
  switch (m?.role) {
    case "user":
      return { role: "user", content: userContent(m.content) };
    case "assistant": {
      const out = { role: "assistant", content: null };
      const blocks = Array.isArray(m.content) ? m.content : [{ type: "text", text: String(m.content ?? "") }];
      const texts = blocks.filter((b) => b.type === "text");
      if (texts.length) out.content = texts.map((b) => ({ type: "text", text: b.text }));
      const signed = blocks.filter((b) => b.type === "thinking" && (b.thinkingSignature || b.redacted));
      const plain = blocks.filter((b) => b.type === "thinking" && !(b.thinkingSignature || b.redacted));
      if (plain.length) out.reasoning_content = plain.map((b) => b.thinking).join("\n");
      if (signed.length) out.thinking_blocks = signed.map((b) => ({ type: "thinking", thinking: b.thinking ?? "", signature: String(b.thinkingSignature ?? "redacted") }));
      const calls = blocks.filter((b) => b.type === "toolCall");
      if (calls.length) out.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }));
      return out;
    }
    case "toolResult":
      return { role: "tool", tool_call_id: m.toolCallId, name: m.toolName, content: textOf(m.content) };
    default:
      return { role: "user", content: syntheticText(m), synthetic: true };
  }
}

/** Pi messages → canonical messages, and for each canonical message its Pi message. */
export function toCanonical(messages) {
  return { canonical: messages.map(toCanonicalOne), hostIndex: messages.map((_, i) => i) };
}

function applyEdit(m, edit) {
  if (edit.compress && m.role === "toolResult") return { ...m, content: [{ type: "text", text: edit.compress.text }] };
  if (edit.compress_text && m.role === "assistant" && Array.isArray(m.content)) {
    let n = -1;
    return { ...m, content: m.content.map((b) => (b.type === "text" && ++n === edit.compress_text.nth ? { ...b, text: edit.compress_text.text } : b)) };
  }
  if (edit.prepend !== undefined && m.role === "user") {
    const content = typeof m.content === "string" ? `${edit.prepend}\n\n${m.content}` : [{ type: "text", text: edit.prepend }, ...(m.content ?? [])];
    return { ...m, content };
  }
  if (edit.strip_thinking && m.role === "assistant" && Array.isArray(m.content)) {
    return { ...m, content: m.content.filter((b) => !(b.type === "thinking" && (b.thinkingSignature || b.redacted))) };
  }
  return m;
}

/** The rewritten Pi message list: kept messages are Pi's own objects; edited ones are copies. */
export function applyPlan(messages, plan) {
  const out = [];
  for (const item of plan) {
    if (Array.isArray(item)) for (let i = item[0]; i < item[1]; i++) out.push(messages[i]);
    else out.push(item.e.reduce(applyEdit, messages[item.i]));
  }
  return out;
}
