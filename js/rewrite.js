// Applies the engine's rewrite of a request: `[start, end]` keeps the caller's own items as they
// are; `{from, items}` puts the engine's edited items (JSON) in their place. The same for every
// wire and host format: all message-edit semantics live in the engine.

/** The rewritten item list and, for each of its items, the index of the input item it comes from. */
export function applyRewrite(items, rewrite) {
  const out = [];
  const sources = [];
  for (const piece of rewrite) {
    if (Array.isArray(piece)) {
      for (let i = piece[0]; i < piece[1]; i++) {
        out.push(items[i]);
        sources.push(i);
      }
    } else {
      out.push(...piece.items);
      sources.push(...piece.from);
    }
  }
  return { messages: out, sources };
}
