// compact_context (seed 000): keep the highest-scoring messages up to target_ratio of the tokens.
import { asCoded, codedError } from "./errors.js";
import { engineModule } from "./wasm.js";

/**
 * Scores `{role, content}` messages and keeps the best up to `target_ratio` (0.05–1.0) of the
 * original tokens; survivors come back verbatim in their original order. `opts.signals` may give
 * per-message `similarity` (to the query) and `coverage` (by memories) from an embedder; without
 * them recency and role decide and `stats.embedding` is false.
 */
export async function compactContext({ messages, query, target_ratio = 0.4, distill_novel = false } = {}, opts = {}) {
  if (!Array.isArray(messages)) throw codedError("E_ARG", "messages must be an array of {role, content}");
  if (query !== undefined && typeof query !== "string") throw codedError("E_ARG", "query must be a string");
  if (typeof target_ratio !== "number") throw codedError("E_ARG", "target_ratio must be a number between 0.05 and 1.0");
  if (typeof distill_novel !== "boolean") throw codedError("E_ARG", "distill_novel must be a boolean");
  const glue = await engineModule();
  const signals = opts.signals ?? { similarity: null, coverage: null };
  let res;
  try {
    res = JSON.parse(glue.compactContext(JSON.stringify(messages), target_ratio, JSON.stringify(signals)));
  } catch (e) {
    throw asCoded(e);
  }
  return { messages: res.kept.map((i) => messages[i]), stats: res.stats };
}
