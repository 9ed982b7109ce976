// Applies the engine's edit plan. `[start, end]` ranges keep the caller's own objects as they
// are; an edited message comes as `{i, m, e}`: its index, its new JSON, and the edits made
// (which host adapters replay on their own message objects).

/** The rewritten array of wire messages (openai / anthropic formats), and for each of them the
 * index of the input message it comes from. */
export function applyPlan(messages, plan) {
  const out = [];
  const sources = [];
  for (const item of plan) {
    if (Array.isArray(item)) {
      for (let i = item[0]; i < item[1]; i++) {
        out.push(messages[i]);
        sources.push(i);
      }
    } else {
      out.push(item.m);
      sources.push(item.i);
    }
  }
  return { messages: out, sources };
}
