// Per-request accounting: prompt tokens (o200k), a prompt-cache simulation and list-price cost.
//
// Cache model: the tools and the system prompt come first (Anthropic's render order), and each
// request is cached up to its end (a breakpoint on the last message). A request reads from the
// cache the longest prefix it shares, message by message and byte for byte, with the request
// just before it (requests follow each other well inside the 5-minute TTL), if that prefix is at
// least `minPrefix` tokens; the rest of the request is written to the cache (if the request is
// at least `minPrefix` tokens) or sent uncached. Reads cost `read`×, writes `write`× the input price.
import { messageTokens } from "./tokens.mjs";

export class Meter {
  constructor(fixed, cache) {
    this.fixed = fixed;
    this.cache = cache;
    this.prev = null;
    this.rows = [];
  }

  /** Records one request; returns its row. */
  request(messages, events = []) {
    let tokens = this.fixed;
    for (const m of messages) tokens += messageTokens(m);
    let shared = this.prev ? this.fixed : 0;
    if (this.prev) {
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
    };
    this.prev = messages.slice(); // the caller may keep appending to its array
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
