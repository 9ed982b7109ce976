// What the session store offers a host's own LLM summary when the host compacts anyway (the user
// forces it): where the trimmed part is and how to get it back. Shared by the hosts' hooks.

const k = (n) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n ?? 0));

/**
 * One paragraph for the summarizer from a session's status (`Compactor.status()`), or null when
 * the store holds nothing of this session yet. It states what the store keeps and which tools
 * read it, so the summary keeps that pointer instead of losing the trimmed turns for good.
 */
export function compactingText(status) {
  if (!status?.messages) return null;
  const last = status.last_trim;
  const trims = status.trims
    ? ` ${status.trims} trim${status.trims === 1 ? "" : "s"} so far took older turns out of the model's context` +
      (last
        ? ` (the latest: ${last.removed_messages} messages, ≈${k(last.removed_tokens)} tokens${last.lifted ? ", since lifted" : ""})`
        : "") +
      "."
    : "";
  return (
    `[smarter-compact] All ${status.messages} messages of this session are kept in full in the local session store.${trims} ` +
    "After this summary they stay searchable: smart_compact_search(query), smart_compact_sql(sql) and smart_compact_get(id) read them. " +
    "Keep this note in the summary so the next turns know where the earlier details are."
  );
}
