// `smarter-compact context set <pattern> <tokens>` edits `[context_proxy.trim_at]` of
// config.toml (comments kept); `context show` prints the thresholds in force.
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { configPath, engineOptions, resolveStateDir } from "../config.js";
import { asCoded } from "../errors.js";
import { engineModule } from "../wasm.js";
import { UsageError } from "./args.js";
import { writeAtomic } from "./files.js";
import { tomlEditor } from "./toml-edit.js";

/** The lines that differ between two texts (common head and tail left out). */
export function changedLines(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  return [
    ...a
      .slice(head, a.length - tail)
      .filter((l) => l.trim())
      .map((l) => `- ${l}`),
    ...b
      .slice(head, b.length - tail)
      .filter((l) => l.trim())
      .map((l) => `+ ${l}`),
  ];
}

/** `context set <pattern> <tokens>`. */
export async function contextSet({ pattern, tokens, stateDir: explicit }, out) {
  if (!/^[0-9]+$/.test(tokens))
    throw new UsageError(
      `context set: <tokens> must be a whole number of tokens, got ${JSON.stringify(tokens)}`,
    );
  const file = configPath(resolveStateDir(explicit));
  let before = "";
  try {
    before = readFileSync(file, "utf8");
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  const editor = await tomlEditor();
  let after;
  try {
    after = editor.setTrimAt(before, pattern, Number(tokens));
  } catch (e) {
    throw asCoded(e);
  }
  if (after === before) {
    out(`${file}: ${JSON.stringify(pattern)} is already ${tokens} tokens; nothing changed`);
    return 0;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeAtomic(file, after);
  out(`${file}: [context_proxy.trim_at] ${JSON.stringify(pattern)} = ${tokens}`);
  for (const l of changedLines(before, after)) out(`  ${l}`);
  if (process.env.CONTEXT_TRIM_AT_TOKENS)
    out(
      `note: CONTEXT_TRIM_AT_TOKENS=${process.env.CONTEXT_TRIM_AT_TOKENS} is set and overrides this table`,
    );
  return 0;
}

/** The configuration in force for a state dir, resolved by the engine (no store is opened). */
export async function configInForce(stateDir) {
  const glue = await engineModule();
  try {
    return glue.resolveConfig(engineOptions(stateDir));
  } catch (e) {
    throw asCoded(e);
  }
}

/** `context show [--json]`. */
export async function contextShow({ stateDir: explicit, json }, out) {
  const stateDir = resolveStateDir(explicit);
  const s = await configInForce(stateDir);
  const file = configPath(stateDir);
  let exists = true;
  try {
    statSync(file);
  } catch {
    exists = false;
  }
  const shown = {
    config_file: file,
    config_file_exists: exists,
    trim_at_override: s.trim_at_override ?? null,
    trim_at: Object.fromEntries(s.trim_at_table ?? []),
    trim_to_fraction: s.trim_to_fraction,
    compress_over_tokens: s.compress_over_tokens,
    protected_tools: s.protected_tools ?? [],
    compaction_recall: s.compaction_recall ?? false,
    warnings: s.warnings ?? [],
  };
  if (json) {
    out(JSON.stringify(shown, null, 2));
    return 0;
  }
  out(`config: ${file}${exists ? "" : " (not there: built-in defaults)"}`);
  if (shown.trim_at_override)
    out(
      `trim at: ${shown.trim_at_override} tokens for every model (CONTEXT_TRIM_AT_TOKENS overrides the table below)`,
    );
  out("trim at, per model pattern (`*` globs, otherwise a substring; the longest match wins):");
  const w = Math.max(...(s.trim_at_table ?? []).map(([p]) => JSON.stringify(p).length), 7);
  for (const [p, t] of s.trim_at_table ?? []) out(`  ${JSON.stringify(p).padEnd(w)}  ${t}`);
  out(`in-flight turn trimmed to: ${shown.trim_to_fraction} of the threshold`);
  out(`tool results compressed over: ${shown.compress_over_tokens} tokens`);
  out(`protected tools: ${shown.protected_tools.join(", ") || "none"}`);
  out(`recall on trim: ${shown.compaction_recall ? "on" : "off"}`);
  for (const warning of shown.warnings) out(`warning: ${warning}`);
  return 0;
}
