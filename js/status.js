// context_status as text a person or a model reads at a glance.

const k = (n) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n ?? 0));

// `, 3 results superseded ≈1.2k tokens` when the trim sent results as references to later ones.
const superseded = (t) =>
  t.superseded_messages
    ? `, ${t.superseded_messages} superseded result${t.superseded_messages === 1 ? "" : "s"} ≈${k(t.superseded_tokens)} tokens`
    : "";

export function statusText(s) {
  const lines = [`smarter-compact ${s.version ?? ""} · session ${s.session_id}`.trim()];
  const st = s.store ?? {};
  if (st.ok)
    lines.push(`store: ${st.backend ?? "?"} at ${st.path}${st.readonly ? " (read-only)" : ""}`);
  else if (st.readonly) lines.push(`store: NOT READABLE (${st.error?.code}: ${st.error?.message})`);
  else
    lines.push(
      `store: NOT AVAILABLE (${st.error?.code}: ${st.error?.message}) — requests pass through unchanged until it is`,
    );
  if (s.trim_at_table) {
    const table = s.trim_at_override
      ? `${s.trim_at_override} tokens for every model (CONTEXT_TRIM_AT_TOKENS)`
      : s.trim_at_table.map(([p, t]) => `${p} ${typeof t === "number" ? k(t) : t}`).join(", ") +
        ` (built-in values at most ${Math.round(s.trim_at_fraction * 100)}% of the window less the host's reserve)`;
    lines.push(
      `trim at: ${table}; in-flight turn trimmed to ${s.trim_to_fraction} of it; tool results over ${s.compress_over_tokens} tokens compressed`,
    );
  }
  const last = s.last_request;
  if (last)
    lines.push(
      `threshold in force: ${last.trim_at} tokens for ${last.model || "this model"} (context window ${last.context_window ? `${last.context_window} tokens` : "not known"})`,
    );
  if (s.usage) {
    const u = s.usage;
    const saved = u.before_tokens
      ? Math.round((100 * (u.before_tokens - u.after_tokens)) / u.before_tokens)
      : 0;
    lines.push(
      `requests: ${u.requests}; tokens sent ${k(u.after_tokens)} of ${k(u.before_tokens)} received (${saved}% less); prefix reused on ${u.prefix_reused} requests; over the limit ${u.over_limit}`,
    );
    const last = s.last_trim
      ? ` (last: #${s.last_trim.seq}, ${s.last_trim.removed_messages} messages ≈${k(s.last_trim.removed_tokens)} tokens${s.last_trim.manual ? ", manual" : ""}${superseded(s.last_trim)})`
      : "";
    lines.push(
      `messages stored: ${s.messages}; trims: ${s.trims}${last}; compressed outputs: ${u.compressed}`,
    );
    if (s.regret)
      lines.push(
        `trim regret: ${s.regret.recalls} recalls of what a cut removed, ${s.regret.repeats} calls made again after a cut removed them`,
      );
  }
  if (s.stored) {
    const writers = s.stored.writers.map(([v, n]) => `${v} (${n})`).join(", ") || "none yet";
    lines.push(
      `store rows: ${s.stored.messages} messages, ${s.stored.in_context} in context, ${s.stored.blobs} compressed outputs kept in full; written by ${writers}`,
    );
  }
  lines.push(`fail-opens: ${s.fail_opens}${s.manual_pending ? "; a manual trim is pending" : ""}`);
  if (s.warnings?.length) lines.push(`config warnings: ${s.warnings.join("; ")}`);
  return lines.join("\n");
}
