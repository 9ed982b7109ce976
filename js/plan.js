// Applies the engine's edit plan to the caller's own message objects: `[start, end]` ranges keep
// the caller's objects as they are; other items are replacement messages.

/** The rewritten message array. */
export function applyPlan(messages, plan) {
  const out = [];
  for (const item of plan) {
    if (Array.isArray(item)) for (let i = item[0]; i < item[1]; i++) out.push(messages[i]);
    else out.push(item);
  }
  return out;
}
