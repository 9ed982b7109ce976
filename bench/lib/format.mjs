// Formatting helpers of the report: numbers, tables, labels of arms and price models.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const load = (dir, name) =>
  existsSync(join(dir, `${name}.json`))
    ? JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"))
    : null;
export const f1 = (x) => (x == null ? "–" : Number.isInteger(x) ? String(x) : x.toFixed(1));
export const f2 = (x) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(2));
export const pctf = (x, d = 0) => (x == null ? "–" : `${(x * 100).toFixed(d)}%`);
export const tok = (x) =>
  x >= 1e6 ? `${(x / 1e6).toFixed(1)}M` : x >= 1e3 ? `${Math.round(x / 1e3)}k` : `${Math.round(x)}`;
/** A window or threshold: exact thousands or millions without a decimal ("1M", "200k", "95k"). */
export const size = (x) =>
  x >= 1e6 && x % 1e6 === 0 ? `${x / 1e6}M` : x >= 1e3 && x % 1e3 === 0 ? `${x / 1e3}k` : tok(x);
export const usd = (x) => (x == null ? "–" : x >= 0.1 ? `$${x.toFixed(2)}` : `$${x.toFixed(3)}`);
export const ms = (x) =>
  x == null ? "–" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
export const ratio = (x) => (x == null ? "–" : `${x.toFixed(x >= 10 ? 0 : 1)}×`);
export const sgn = (x) => (x == null ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(1)}%`);
export const plural = (n, w) => `${n} ${w}${n === 1 ? "" : "s"}`;
export const fmtS = (s) =>
  s == null ? "–" : s >= 90 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(0)} s`;
/** A range "a–b", or "a" when both ends are the same. */
export const range = (a, b, f = String) => (f(a) === f(b) ? f(a) : `${f(a)}–${f(b)}`);
const WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
/** A small count as a word ("five"), larger ones as digits. */
export const word = (n) => WORDS[n] ?? String(n);
/** A task's label in the report's tables ("kv-store R4000", "log-triage L1600", "test log T2000"). */
export const taskLabel = (id) =>
  id
    .replace(/^kv-/, "kv-store ")
    .replace(/^log-/, "log-triage ")
    .replace(/^testlog-/, "test log ");
/** A task's short label (the README snippet's). */
export const shortTask = (id) =>
  id
    .replace(/^kv-/, "kv ")
    .replace(/^log-/, "log ")
    .replace(/^testlog-/, "test log ");

export function table(head, rows) {
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

/** The label of an arm, with its parameters from the bench config (windows, ratio). */
export function armLabel(arm, config) {
  const a = config.arms;
  switch (arm) {
    case "compact_context":
      return `compact_context ${a.compact_context.target_ratio}`;
    case "opencode-prune":
      return "OpenCode prune";
    case "keep":
      return `keep everything (${size(config.window)})`;
    case "keep-1m":
      return `keep everything (${size(a["keep-1m"].window)})`;
    default:
      return arm;
  }
}

/** "one price tier" / "two price tiers (prompts ≤ 100k, longer)" of a price model. */
export function tierLabel(p) {
  const n = p.tiers.length;
  if (n === 1) return "one price tier";
  const bounds = p.tiers.map((t) => (t.upTo ? `≤ ${size(t.upTo)}` : "longer"));
  return `${word(n)} price tiers (prompts ${bounds.join(", ")})`;
}

/** The rates of a price model's tiers, $ per million tokens. */
export function tierText(p) {
  return p.tiers
    .map(
      (t) =>
        `${t.upTo ? `prompts ≤ ${size(t.upTo)}` : p.tiers.length > 1 ? "longer prompts" : "all prompts"}: input $${t.input}, output $${t.output}, cache write $${t.cacheWrite}, cache read $${t.cacheRead}`,
    )
    .join("; ");
}

/** The first tier bound of a multi-tier price model (the prompt size where its price rises). */
export const firstTierBound = (p) => (p.tiers.length > 1 ? p.tiers[0].upTo : null);
