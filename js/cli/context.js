// `smarter-compact context set <pattern> <tokens|N%>` edits `[context_proxy.trim_at]` of the
// user's config.toml or the project's .smarter-compact.toml (comments kept); `context show`
// prints every value in force and where it came from.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  PROJECT_CONFIG,
  configPath,
  engineOptions,
  projectConfigPath,
  resolveStateDir,
} from "../config.js";
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

/** `context set <pattern> <tokens|N%> [--project DIR]`: the user's config.toml, or the
 * project's `.smarter-compact.toml` (the one found from DIR, else a new one in DIR). */
export async function contextSet({ pattern, value, stateDir: explicit, project }, out) {
  if (!/^\s*(?:[0-9][0-9_]*|[0-9]+(?:\.[0-9]+)?%)\s*$/.test(value))
    throw new UsageError(
      `context set: the threshold must be whole tokens (120000) or a share of the window (60%), got ${JSON.stringify(value)}`,
    );
  const file = project
    ? (projectConfigPath(project) ?? join(resolve(project), PROJECT_CONFIG))
    : configPath(resolveStateDir(explicit));
  let before = "";
  try {
    before = readFileSync(file, "utf8");
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  const editor = await tomlEditor();
  let after;
  try {
    after = editor.setTrimAt(before, pattern, value);
  } catch (e) {
    throw asCoded(e);
  }
  const shown = value.trim().replace(/_/g, "");
  if (after === before) {
    out(`${file}: ${JSON.stringify(pattern)} is already ${shown}; nothing changed`);
    return 0;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeAtomic(file, after);
  out(`${file}: [context_proxy.trim_at] ${JSON.stringify(pattern)} = ${shown}`);
  for (const l of changedLines(before, after)) out(`  ${l}`);
  if (process.env.CONTEXT_TRIM_AT_TOKENS)
    out(
      `note: CONTEXT_TRIM_AT_TOKENS=${process.env.CONTEXT_TRIM_AT_TOKENS} is set and overrides this table`,
    );
  return 0;
}

/** The configuration in force for a state dir and a project, resolved by the engine (no store
 * is opened). */
export async function configInForce(stateDir, projectDir = null) {
  const glue = await engineModule();
  try {
    return glue.resolveConfig(engineOptions(stateDir, {}, projectDir));
  } catch (e) {
    throw asCoded(e);
  }
}

/** `context show [--project DIR] [--json]`: every value in force, each with where it came from
 * (`built-in` when nothing set it). */
export async function contextShow({ stateDir: explicit, project, json }, out) {
  const stateDir = resolveStateDir(explicit);
  const projectDir = resolve(project ?? process.cwd());
  const s = await configInForce(stateDir, projectDir);
  const origins = s.origins ?? {};
  const from = (key) => origins[key] ?? "built-in";
  const userFile = configPath(stateDir);
  const projectFile = projectConfigPath(projectDir);
  const shown = {
    config_file: userFile,
    config_file_exists: existsSync(userFile),
    project_config_file: projectFile,
    trim_at_override: s.trim_at_override ?? null,
    trim_at: Object.fromEntries(s.trim_at_table ?? []),
    context_window: Object.fromEntries(s.window_table ?? []),
    trim_at_fraction: s.trim_at_fraction,
    trim_to_fraction: s.trim_to_fraction,
    compress_over_tokens: s.compress_over_tokens,
    protected_tools: s.protected_tools ?? [],
    compaction_recall: s.compaction_recall ?? false,
    memory_bank: s.memory_bank ?? null,
    origins,
    warnings: s.warnings ?? [],
  };
  if (json) {
    out(JSON.stringify(shown, null, 2));
    return 0;
  }
  out(`user config: ${userFile}${shown.config_file_exists ? "" : " (not there)"}`);
  out(
    `project config: ${projectFile ?? `none (no ${PROJECT_CONFIG} from ${projectDir} up to its repository root)`}`,
  );
  out(
    "precedence, later wins: built-in < user config < project config < CONTEXT_* environment < host options",
  );
  if (shown.trim_at_override)
    out(
      `trim at: ${shown.trim_at_override} tokens for every model, from ${from("trim_at_tokens")} (overrides the table below)`,
    );
  out("trim at, per model pattern (`*` globs, otherwise a substring; the longest match wins):");
  const table = (rows, key) => {
    const w = Math.max(...rows.map(([p]) => JSON.stringify(p).length), 7);
    const v = Math.max(...rows.map(([, t]) => String(t).length), 6);
    for (const [p, t] of rows)
      out(`  ${JSON.stringify(p).padEnd(w)}  ${String(t).padEnd(v)}  ${from(`${key}.${p}`)}`);
  };
  table(s.trim_at_table ?? [], "trim_at");
  out(
    `built-in values at most: ${shown.trim_at_fraction} of the window less the host's reserve (${from("trim_at_fraction")}); "N%" entries are a share of the window`,
  );
  out("context windows of models whose host does not tell it (the proxy):");
  table(s.window_table ?? [], "context_window");
  out(
    `in-flight turn trimmed to: ${shown.trim_to_fraction} of the threshold (${from("trim_to_fraction")})`,
  );
  out(
    `tool results compressed over: ${shown.compress_over_tokens} tokens (${from("compress_over_tokens")})`,
  );
  out(
    `protected tools: ${shown.protected_tools.join(", ") || "none"} (${from("protected_tools")})`,
  );
  out(`recall on trim: ${shown.compaction_recall ? "on" : "off"} (${from("compaction_recall")})`);
  if (shown.memory_bank) out(`memory bank: ${shown.memory_bank} (${from("memory_bank")})`);
  for (const warning of shown.warnings) out(`warning: ${warning}`);
  return 0;
}
