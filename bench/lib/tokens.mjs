// Token counts with a real BPE tokenizer: js-tiktoken, o200k_base (GPT-4o/5 family), counted on
// the JSON serialisation of what goes over the wire. A request is counted as the sum of its
// messages' serialisations plus its fixed part (model, tools); `checkRequest` measures how far
// that sum is from encoding the whole request at once (reported in REPORT.md).
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";

let enc = null;
const encoder = () => (enc ??= new Tiktoken(o200k));

/** Tokens of a string. */
export function countText(text) {
  return text ? encoder().encode(text).length : 0;
}

const byObject = new WeakMap();
let byString = new Map();

/** Tokens of one message as serialised (memoised by object, then by its JSON text). */
export function messageTokens(m) {
  let n = byObject.get(m);
  if (n !== undefined) return n;
  const s = JSON.stringify(m);
  n = byString.get(s);
  if (n === undefined) {
    n = countText(s);
    byString.set(s, n);
  }
  byObject.set(m, n);
  return n;
}

/** Forgets string-keyed counts (between trials, to bound memory). */
export function resetTokenCache() {
  byString = new Map();
}

/** Tokens of the fixed part of a request: everything but the messages. */
export function fixedTokens(model, tools) {
  return countText(JSON.stringify({ model, tools, messages: [] }));
}

/** Encodes a whole request at once and compares it with the per-message sum. */
export function checkRequest(model, tools, messages) {
  const whole = countText(JSON.stringify({ model, tools, messages }));
  const summed = fixedTokens(model, tools) + messages.reduce((s, m) => s + messageTokens(m), 0);
  return { whole, summed, diff: summed - whole };
}

/** Framing tokens per message added by `messageTextTokens` (the usual chat-template overhead). */
export const FRAMING_TOKENS = 4;

const textByObject = new WeakMap();

/** Tokens of what the model reads of a message: its text, tool names and arguments, plus
 * FRAMING_TOKENS per message, without JSON escaping. */
export function messageTextTokens(m) {
  let n = textByObject.get(m);
  if (n !== undefined) return n;
  n = FRAMING_TOKENS;
  if (typeof m.content === "string") n += countText(m.content);
  else if (Array.isArray(m.content))
    for (const b of m.content) n += countText(b.text ?? b.content ?? JSON.stringify(b));
  for (const c of m.tool_calls ?? [])
    n += countText(c.function?.name) + countText(c.function?.arguments);
  textByObject.set(m, n);
  return n;
}
