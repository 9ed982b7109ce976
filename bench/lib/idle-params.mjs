// Fixed parameters of the idle phase (bench/run.mjs --only=idle): the simulated clock's gaps
// between requests and the prompt cache's lifetime the meter applies. The report states them.
export const IDLE = {
  /** The prompt cache's lifetime the meter applies, ms: the providers' default 5-minute TTL (the
   * bench's prices are 5-minute cache writes). A request later than this after the one before
   * it finds the cache empty and writes its whole prompt. */
  ttlMs: 5 * 60_000,
  /** A short gap, ms (uniform): the model's turn, a tool run, a glance at the answer. */
  shortMs: [2_000, 90_000],
  /** A long gap, ms (uniform): the user steps away. */
  longMs: [6 * 60_000, 40 * 60_000],
  /** Chance of a long gap before a request of the tool loop (a prompt waiting for the user). */
  longInLoop: 0.04,
  /** Chance of a long gap before a question (the user comes back later to ask it). */
  longBeforeQuestion: 0.25,
  /** The gap before the request that follows a recall tool call (no user in between), ms. */
  recallMs: 3_000,
  /** The simulated clock's start, ms since the epoch. */
  startMs: Date.UTC(2026, 0, 5, 9, 0, 0),
  /** What the off arm's config.toml says to turn cache-cold cuts off (the engine's switch: a
   * lifetime of 0 for every model). */
  offToml: "[context_proxy.cache_ttl]\ndefault = 0\n",
};
