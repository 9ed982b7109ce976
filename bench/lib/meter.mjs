// Per-request accounting: prompt tokens (o200k), a prompt-cache simulation and list-price cost.
//
// Cache model: the tools and the system prompt come first (Anthropic's render order), and each
// request is cached up to its end (a breakpoint on the last message). A request reads from the
// cache the longest prefix it shares, message by message and byte for byte, with the request
// just before it, if that prefix is at least `minPrefix` tokens; the rest of the request is
// written to the cache (if the request is at least `minPrefix` tokens) or sent uncached. Reads
// cost `read`×, writes `write`× the input price. Without a clock the cache never expires (the
// requests follow each other well inside the 5-minute TTL); with one (`ttlMs` and each request's
// time), a request more than `ttlMs` after the one before it reads nothing: the provider has
// dropped the entry (each read or write renews it), so it writes its whole prompt.
import { messageTokens } from "./tokens.mjs";

export class Meter {
  /** `ttlMs`: the cache's lifetime when requests carry their time (null: it never expires). */
  constructor(fixed, cache, { ttlMs = null } = {}) {
    this.fixed = fixed;
    this.cache = cache;
    this.ttlMs = ttlMs;
    this.prev = null;
    this.prevAt = null;
    this.rows = [];
  }

  /** Records one request (`atMs`: its time on the clock, with `ttlMs`); returns its row. */
  request(messages, events = [], atMs = null) {
    let tokens = this.fixed;
    for (const m of messages) tokens += messageTokens(m);
    const gapMs = atMs != null && this.prevAt != null ? atMs - this.prevAt : null;
    const expired = this.ttlMs != null && gapMs != null && gapMs > this.ttlMs;
    let shared = this.prev && !expired ? this.fixed : 0;
    if (this.prev && !expired) {
      const p = this.prev;
      for (let i = 0; i < Math.min(p.length, messages.length); i++) {
        const a = p[i];
        const b = messages[i];
        if (a !== b && JSON.stringify(a) !== JSON.stringify(b)) break;
        shared += messageTokens(b);
      }
    }
    const min = this.cache.minPrefix;
    const read = shared >= min ? shared : 0;
    const write = tokens >= min ? tokens - read : 0;
    const row = {
      tokens,
      read,
      write,
      fresh: tokens - read - write,
      out: 0,
      events,
      n: messages.length,
      gapMs,
      expired,
    };
    this.prev = messages.slice(); // the caller may keep appending to its array
    this.prevAt = atMs;
    if (this.keepPeak && tokens > (this.peakTokens ?? 0)) {
      this.peakTokens = tokens;
      this.peakMessages = this.prev;
    }
    this.rows.push(row);
    return row;
  }

  /** Output tokens of the answer to the last request. */
  output(tokens) {
    if (this.rows.length) this.rows[this.rows.length - 1].out += tokens;
  }
}

/** List-price cost of request rows under a price model ({tiers: [{upTo, input, output, cacheWrite, cacheRead}]}, $/MTok). */
export function cost(rows, price) {
  let usd = 0;
  for (const r of rows) {
    const t = price.tiers.find((x) => x.upTo == null || r.tokens <= x.upTo);
    usd +=
      (r.fresh * t.input + r.write * t.cacheWrite + r.read * t.cacheRead + r.out * t.output) / 1e6;
  }
  return usd;
}

/** Totals of request rows. */
export function totals(rows) {
  const s = {
    requests: rows.length,
    tokens: 0,
    read: 0,
    write: 0,
    fresh: 0,
    out: 0,
    peak: 0,
    overTier: 0,
  };
  for (const r of rows) {
    s.tokens += r.tokens;
    s.read += r.read;
    s.write += r.write;
    s.fresh += r.fresh;
    s.out += r.out;
    s.peak = Math.max(s.peak, r.tokens);
  }
  s.hit = s.tokens ? s.read / s.tokens : 0;
  return s;
}
