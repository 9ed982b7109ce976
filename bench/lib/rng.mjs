// Seeded pseudo-random numbers (mulberry32): the same seed gives the same task on every machine.

/** A generator of floats in [0, 1) from a 32-bit seed, with a few helpers. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    /** Integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    /** Picks by weight from [[value, weight], ...]. */
    weighted: (pairs) => {
      const total = pairs.reduce((s, p) => s + p[1], 0);
      let x = next() * total;
      for (const [v, w] of pairs) if ((x -= w) < 0) return v;
      return pairs[pairs.length - 1][0];
    },
    hex: (n) => {
      let s = "";
      for (let i = 0; i < n; i++) s += Math.floor(next() * 16).toString(16);
      return s;
    },
    /** k distinct elements of xs (Fisher–Yates prefix). */
    sample: (xs, k) => {
      const a = xs.slice();
      for (let i = 0; i < Math.min(k, a.length); i++) {
        const j = i + Math.floor(next() * (a.length - i));
        [a[i], a[j]] = [a[j], a[i]];
      }
      return a.slice(0, k);
    },
    shuffle: (xs) => r.sample(xs, xs.length),
  };
  return r;
}

/** A seed derived from a string and a number (FNV-1a), so each task/size/seed has its own stream. */
export function seedOf(name, n) {
  let h = 0x811c9dc5;
  for (const ch of `${name}#${n}`) h = Math.imul(h ^ ch.codePointAt(0), 0x01000193) >>> 0;
  return h;
}
