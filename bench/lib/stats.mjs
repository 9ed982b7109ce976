// Small statistics helpers.

export function quantile(xs, q) {
  if (!xs.length) return null;
  const a = [...xs].sort((x, y) => x - y);
  const pos = (a.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return a[lo] + (a[hi] - a[lo]) * (pos - lo);
}

export const mean = (xs) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

/** The quantiles of the bootstrap interval (a 95% interval). */
export const BOOTSTRAP_Q = [0.025, 0.975];

/** Bootstrap interval (BOOTSTRAP_Q) of the mean of `xs` (seeded, 2000 resamples). */
export function bootstrap(xs, seed = 1, n = 2000) {
  if (xs.length < 2) return [mean(xs), mean(xs)];
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const means = [];
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < xs.length; j++) s += xs[Math.floor(rnd() * xs.length)];
    means.push(s / xs.length);
  }
  return [quantile(means, BOOTSTRAP_Q[0]), quantile(means, BOOTSTRAP_Q[1])];
}
