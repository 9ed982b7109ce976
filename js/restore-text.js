// The answer to a restore, shared by the hosts' /smarter-compact:restore and the command line.

const k = (n) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));

/** The answer to a restore, for a person: what comes back and the one-time cache write. */
export function restoreText(plan) {
  if (plan.cut == null) return "smarter-compact: nothing to restore: no cut is in force";
  return (
    `smarter-compact: the next request lifts cut #${plan.cut}: ${plan.messages} messages come back; ` +
    `it writes ≈${k(plan.cache_write_tokens)} tokens to the prompt cache once. ` +
    "Automatic trims wait until the request has grown again; /smarter-compact:compact trims now."
  );
}
