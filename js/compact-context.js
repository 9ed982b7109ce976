// compact_context (seed 000): keep the highest-scoring messages up to target_ratio of the tokens.
import { asCoded, codedError } from "./errors.js";
import { flat, sharedEmbedder } from "./memory.js";
import { engineModule } from "./wasm.js";

/** A dropped turn shorter than this is not worth distilling (seed 000). */
const DISTILL_MIN_CHARS = 40;
/** Characters kept of a distilled turn (seed 000). */
const DISTILL_CHARS = 600;
/** A dropped turn this close to a memory is already covered. */
const COVERED = 0.85;
/** Characters of a message the embedder reads (it stops at 256 tokens anyway). */
const EMBED_CHARS = 1000;

const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/**
 * Scores `{role, content}` messages and keeps the best up to `target_ratio` (0.05–1.0) of the
 * original tokens; survivors come back verbatim in their original order. With an embedder the
 * scores use similarity to `query` and, with a memory bank, coverage by memories
 * (`stats.embedding: true`); without, recency and role decide. `distill_novel` records capped
 * excerpts of novel dropped turns in the bank. `opts`: `{embedder, bank, source}`.
 */
export async function compactContext(
  { messages, query, target_ratio = 0.4, distill_novel = false } = {},
  opts = {},
) {
  if (!Array.isArray(messages))
    throw codedError("E_ARG", "messages must be an array of {role, content}");
  if (query !== undefined && typeof query !== "string")
    throw codedError("E_ARG", "query must be a string");
  if (typeof target_ratio !== "number")
    throw codedError("E_ARG", "target_ratio must be a number between 0.05 and 1.0");
  if (typeof distill_novel !== "boolean")
    throw codedError("E_ARG", "distill_novel must be a boolean");
  const glue = await engineModule();
  let texts;
  try {
    texts = glue.messageTexts(messages);
  } catch (e) {
    throw asCoded(e);
  }
  const embedder = opts.embedder === undefined ? await sharedEmbedder() : opts.embedder;
  const bank = opts.bank ?? null;
  let signals = { similarity: null, coverage: null };
  let vecs = null;
  if (embedder && messages.length) {
    vecs = await embedder.embed(texts.map((t) => t.slice(0, EMBED_CHARS)));
    const qv = query ? (await embedder.embed([query]))[0] : null;
    signals = {
      similarity: vecs.map((v) => (qv ? dot(v, qv) : 0)),
      coverage: bank ? Array.from(bank.coverage(flat(vecs))) : null,
    };
  }
  let res;
  try {
    res = glue.compactContext(messages, target_ratio, signals);
  } catch (e) {
    throw asCoded(e);
  }
  const stats = { ...res.stats };
  if (distill_novel) {
    stats.distilled = 0;
    if (!vecs || !bank)
      stats.distill_note =
        "distill_novel needs the embedder and a memory bank (CONTEXT_MEMORY_BANK)";
    else {
      const kept = new Set(res.kept);
      const source = opts.source ?? "compact_context";
      messages.forEach((m, i) => {
        const text = texts[i].trim();
        if (
          kept.has(i) ||
          text.length < DISTILL_MIN_CHARS ||
          (signals.coverage?.[i] ?? 0) >= COVERED
        )
          return;
        const memory = `[distilled from ${source}, ${m.role} turn ${i}] ${text.slice(0, DISTILL_CHARS)}`;
        if (bank.add("distilled", memory, source, Date.now()) >= 0) stats.distilled++;
      });
    }
  }
  return { messages: res.kept.map((i) => messages[i]), stats };
}
