// `doctor`: the thresholds in force (through `context show`'s machinery) and each host's own
// compaction settings. A setting fights smarter-compact when the host would compact before
// smarter-compact trims: for a typical window, the host's trigger (window − its reserve, or its
// percentage, or its token limit) at or below smarter-compact's threshold for that window.
//
// Host settings (read from the hosts' own code): Pi `compaction.{enabled, reserveTokens,
// keepRecentTokens, modelOverrides["provider/model"]}` (fires above window − reserveTokens,
// 16,384 by default); OpenCode `compaction.{auto, prune, reserved, tail_turns,
// preserve_recent_tokens}` (fires at the input limit − `reserved`, default min(20,000, output
// limit), or at window − output limit for models with no input limit); Claude Code
// `autoCompactEnabled` in ~/.claude.json and `env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`; Codex
// `model_auto_compact_token_limit` in config.toml.
import { engineModule } from "../wasm.js";
import { configInForce } from "./context.js";
import { finding } from "./doctor-common.js";
import { tomlValue } from "./doctor-proxy-hosts.js";

/** The window assumed when the model is not known: Claude's and most current models'. */
export const TYPICAL_WINDOW = 200_000;
/** The reserve each plugin tells the engine (js/hosts/pi.js, js/hosts/opencode.js). */
const PI_RESERVE = 16_384;
const OPENCODE_RESERVE = 32_000;
const PI_DEFAULT_RESERVE = 16_384;
const OPENCODE_DEFAULT_RESERVED = 20_000;

/** The configuration in force and the built-in threshold table (what no file set). */
export async function thresholdConfig(stateDir, projectDir) {
  const cfg = await configInForce(stateDir, projectDir);
  const glue = await engineModule();
  const builtin = glue.resolveConfig({ env: {}, toml: null, projectToml: null, config: {} });
  return { cfg, builtin: builtin.trim_at_table ?? [] };
}

/** The thresholds in force per model pattern: `{ pattern, value, origin, capped }` (`capped`:
 * a built-in value, held under `trim_at_fraction` of the window less the host's reserve). */
export function thresholdRows({ cfg, builtin }) {
  const origins = cfg.origins ?? {};
  const rows = [];
  if (cfg.trim_at_override != null)
    rows.push({
      pattern: "*",
      value: cfg.trim_at_override,
      origin: origins.trim_at_tokens ?? "built-in",
      capped: false,
    });
  for (const [pattern, value] of cfg.trim_at_table ?? [])
    rows.push({
      pattern,
      value,
      origin: origins[`trim_at.${pattern}`] ?? "built-in",
      capped: builtin.some(([p, v]) => p === pattern && v === value),
    });
  return rows;
}

/** `*` globs, otherwise a substring (as src/config/threshold.rs `pattern_matches`). */
function patternMatches(pattern, model) {
  if (!pattern.includes("*")) return model.includes(pattern);
  const re = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${re.join(".*")}$`, "s").test(model);
}

/** A model's window from the table (0 when unknown), as `window_for` with nothing told. */
export function windowFor({ cfg }, model) {
  const m = model.toLowerCase();
  let best = null;
  for (const [p, t] of cfg.window_table ?? [])
    if (patternMatches(p, m) && (!best || p.length > best[0].length)) best = [p, t];
  return best ? best[1] : 0;
}

/**
 * The threshold for a model with a `window`-token window of which the host keeps `reserve` free:
 * the engine's own rule (src/config/threshold.rs `trim_at_for`), which the wasm does not export.
 */
export function trimAtFor({ cfg, builtin }, model, window, reserve) {
  if (cfg.trim_at_override != null) return cfg.trim_at_override;
  const usable = window ? Math.max(window - reserve, Math.floor(window / 4)) : 0;
  const cap = (t) =>
    usable ? Math.min(t, Math.max(1, Math.floor(cfg.trim_at_fraction * usable))) : t;
  const entry = (p, v) => {
    if (typeof v === "string")
      return window ? Math.max(1, Math.floor((parseFloat(v) / 100) * window)) : null;
    return builtin.some(([bp, bv]) => bp === p && bv === v) ? cap(v) : v;
  };
  const m = model.toLowerCase();
  let best = null;
  for (const [p, v] of cfg.trim_at_table ?? []) {
    if (p === "default" || !patternMatches(p, m) || (best && p.length <= best[0])) continue;
    const t = entry(p, v);
    if (t != null) best = [p.length, t];
  }
  if (best) return best[1];
  const d = (cfg.trim_at_table ?? []).find(([p]) => p === "default");
  return (d && entry(d[0], d[1])) ?? cap(125_000);
}

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;
const k = (n) => `${Math.round(n).toLocaleString("en-US")}`;

/** The settings of a host's config files merged in order: `{ value, fileOf }` for one object key. */
function mergedObject(configs, key) {
  const value = {};
  const fileOf = {};
  const bad = [];
  for (const { file, value: v } of configs) {
    if (v[key] === undefined) continue;
    if (v[key] === null || typeof v[key] !== "object" || Array.isArray(v[key])) {
      bad.push(file);
      continue;
    }
    for (const [name, x] of Object.entries(v[key])) {
      value[name] = x;
      fileOf[name] = file;
    }
  }
  return { value, fileOf, bad };
}

/** "or: smarter-compact context set <pattern> N%" keeping the threshold under `hostAt`. */
function contextFix(pattern, hostAt, window) {
  const pct = Math.floor((60 * hostAt) / window);
  return pct >= 1 ? `; or: smarter-compact context set ${pattern} ${pct}%` : "";
}

/** Pi's compaction settings against the thresholds. */
export function piCompaction(configs, th) {
  const { value: c, fileOf, bad } = mergedObject(configs, "compaction");
  const out = bad.map((file) =>
    finding(
      "pi",
      "compaction",
      "fail",
      `Pi: "compaction" in ${file} is not an object`,
      `make "compaction" an object or remove it in ${file}`,
    ),
  );
  if (c.enabled === false) {
    out.push(
      finding(
        "pi",
        "compaction",
        "ok",
        `Pi: its own compaction is off (compaction.enabled false in ${fileOf.enabled}); smarter-compact's trim is the only one`,
      ),
    );
    return out;
  }
  const cases = [
    {
      what: "compaction.reserveTokens",
      reserve: c.reserveTokens,
      file: fileOf.reserveTokens,
      model: "",
    },
  ];
  const overrides =
    c.modelOverrides && typeof c.modelOverrides === "object" ? c.modelOverrides : {};
  for (const [key, o] of Object.entries(overrides))
    if (o && typeof o === "object" && o.reserveTokens !== undefined)
      cases.push({
        what: `compaction.modelOverrides["${key}"].reserveTokens`,
        reserve: o.reserveTokens,
        file: fileOf.modelOverrides,
        model: key.split("/").pop() ?? key,
        key,
      });
  let fights = 0;
  for (const { what, reserve = PI_DEFAULT_RESERVE, file, model, key } of cases) {
    if (!isCount(reserve)) {
      out.push(
        finding(
          "pi",
          "compaction",
          "fail",
          `Pi: ${what} = ${JSON.stringify(reserve)} in ${file} is not a whole number of tokens (Pi refuses it)`,
          `set ${what} to ${PI_DEFAULT_RESERVE} or remove it in ${file}`,
        ),
      );
      fights++;
      continue;
    }
    const window = (model && windowFor(th, model)) || TYPICAL_WINDOW;
    const ours = trimAtFor(th, model, window, PI_RESERVE);
    const hostAt = window - reserve;
    if (ours < hostAt) continue;
    fights++;
    const set = key
      ? `set "compaction": {"modelOverrides": {"${key}": {"reserveTokens": ${PI_DEFAULT_RESERVE}}}}`
      : `set "compaction": {"reserveTokens": ${PI_DEFAULT_RESERVE}}`;
    out.push(
      finding(
        "pi",
        "compaction",
        "fail",
        `Pi: ${what} = ${k(reserve)}${file ? ` (${file})` : ""} makes Pi compact at ${k(Math.max(hostAt, 0))} tokens of a ${k(window)}-token window, before smarter-compact trims at ${k(ours)}`,
        `${set} in ${file ?? "Pi's settings.json"}${contextFix(model || "default", hostAt, window)}`,
      ),
    );
  }
  if (!fights && !bad.length)
    out.push(
      finding(
        "pi",
        "compaction",
        "ok",
        `Pi: its compaction fires above window − ${k(isCount(c.reserveTokens) ? c.reserveTokens : PI_DEFAULT_RESERVE)} tokens${c.reserveTokens === undefined ? " (default)" : ""}, after smarter-compact's threshold`,
      ),
    );
  return out;
}

/** OpenCode's compaction settings against the thresholds. */
export function opencodeCompaction(configs, th) {
  const { value: c, fileOf, bad } = mergedObject(configs, "compaction");
  const out = bad.map((file) =>
    finding(
      "opencode",
      "compaction",
      "fail",
      `OpenCode: "compaction" in ${file} is not an object`,
      `make "compaction" an object or remove it in ${file}`,
    ),
  );
  if (c.prune === true)
    out.push(
      finding(
        "opencode",
        "compaction",
        "warn",
        `OpenCode: compaction.prune is on (${fileOf.prune}): OpenCode clears old tool outputs in its history, so smarter-compact sees rewritten turns (its own compression already shrinks them)`,
        `set "compaction": {"prune": false} in ${fileOf.prune}`,
      ),
    );
  if (c.auto === false) {
    out.push(
      finding(
        "opencode",
        "compaction",
        "ok",
        `OpenCode: auto-compaction is off (${fileOf.auto}); smarter-compact's trim is the only one`,
      ),
    );
    return out;
  }
  if (c.reserved !== undefined && !isCount(c.reserved)) {
    out.push(
      finding(
        "opencode",
        "compaction",
        "fail",
        `OpenCode: compaction.reserved = ${JSON.stringify(c.reserved)} in ${fileOf.reserved} is not a whole number of tokens (OpenCode refuses the file)`,
        `remove "reserved" from "compaction" in ${fileOf.reserved}`,
      ),
    );
    return out;
  }
  const reserved = c.reserved ?? OPENCODE_DEFAULT_RESERVED;
  const window = TYPICAL_WINDOW;
  const ours = trimAtFor(th, "", window, OPENCODE_RESERVE);
  const hostAt = window - reserved;
  if (ours >= hostAt)
    out.push(
      finding(
        "opencode",
        "compaction",
        "fail",
        `OpenCode: compaction.reserved = ${k(reserved)}${fileOf.reserved ? ` (${fileOf.reserved})` : ""} makes OpenCode compact at ${k(Math.max(hostAt, 0))} tokens of a ${k(window)}-token window (models that state an input limit), before smarter-compact trims at ${k(ours)}`,
        `remove "reserved" from "compaction" in ${fileOf.reserved ?? "opencode.json"} (default ${k(OPENCODE_DEFAULT_RESERVED)})${contextFix("default", hostAt, window)}`,
      ),
    );
  else if (!bad.length)
    out.push(
      finding(
        "opencode",
        "compaction",
        "ok",
        `OpenCode: its compaction fires at the window less ${c.reserved === undefined ? "the model's output limit (default)" : `${k(reserved)} (compaction.reserved)`}, after smarter-compact's threshold`,
      ),
    );
  return out;
}

/** Claude Code's auto-compact settings against the proxy's threshold for Claude models. */
export function claudeCompaction({ settings, global }, th) {
  if (global?.value?.autoCompactEnabled === false)
    return [
      finding(
        "claude",
        "compaction",
        "ok",
        `Claude Code: auto-compact is off (autoCompactEnabled false in ${global.file})`,
      ),
    ];
  const fromFile = settings?.value?.env?.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE;
  const raw = fromFile ?? process.env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE;
  const pct = parseFloat(raw);
  const m = String(settings?.value?.model ?? "sonnet");
  const model = m.startsWith("claude") ? m : `claude-${m}`;
  const window = windowFor(th, model) || TYPICAL_WINDOW;
  const ours = trimAtFor(th, model, window, 0);
  if (!(pct > 0 && pct <= 100) || (pct / 100) * window > ours)
    return [
      finding(
        "claude",
        "compaction",
        "ok",
        `Claude Code: auto-compact ${raw ? `at ${pct}% of the window` : "at its default"}, after the proxy's threshold (${k(ours)} for ${model})`,
      ),
    ];
  const where =
    fromFile !== undefined
      ? `env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE in ${settings.file}`
      : "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE in the environment";
  return [
    finding(
      "claude",
      "compaction",
      "fail",
      `Claude Code: ${where} = ${raw} makes it compact at ${k((pct / 100) * window)} tokens, before the proxy trims at ${k(ours)}`,
      `${fromFile !== undefined ? `remove env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE from ${settings.file}` : "unset CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"}; or: smarter-compact context set claude- ${Math.max(1, Math.floor(pct * 0.9))}%`,
    ),
  ];
}

/** Codex's auto-compact limit against the proxy's threshold for its model. */
export function codexCompaction({ toml }, th) {
  if (!toml) return [];
  const limit = tomlValue(toml.head, "model_auto_compact_token_limit");
  const model = tomlValue(toml.head, "model") || "gpt-5";
  const told = tomlValue(toml.head, "model_context_window");
  const window = windowFor(th, String(model)) || (typeof told === "number" ? told : 0);
  const ours = trimAtFor(th, String(model), window, 0);
  if (typeof limit !== "number" || limit > ours)
    return [
      finding(
        "codex",
        "compaction",
        "ok",
        `Codex: auto-compact ${typeof limit === "number" ? `at ${k(limit)} tokens` : "at its default"}, after the proxy's threshold (${k(ours)} for ${model})`,
      ),
    ];
  const to = Math.floor(limit * 0.8);
  return [
    finding(
      "codex",
      "compaction",
      "fail",
      `Codex: model_auto_compact_token_limit = ${k(limit)} in ${toml.file} makes it compact before the proxy trims at ${k(ours)} (${model})`,
      `remove model_auto_compact_token_limit from ${toml.file}${to >= 1000 ? `; or: smarter-compact context set ${model} ${to}` : ""}`,
    ),
  ];
}
