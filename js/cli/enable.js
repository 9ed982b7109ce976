// `smarter-compact enable|disable opencode|pi`: registers this installed package's plugin in the
// host's own config file, or takes it out. Idempotent; the rest of the file is left byte for byte.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { codedError } from "../errors.js";
import { addEntry, removeEntry } from "./jsonc-edit.js";
import { UsageError } from "./args.js";
import { readIfThere, writeAtomic } from "./files.js";

const HOSTS_DIR = new URL("../hosts/", import.meta.url);
const expandHome = (p) => (p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p);

/** `DIR/opencode.jsonc` if it exists, else `DIR/opencode.json`. */
function opencodeFile(dir) {
  const jsonc = join(dir, "opencode.jsonc");
  return existsSync(jsonc) ? jsonc : join(dir, "opencode.json");
}

/** What each host needs: its config file, the array key, the entry, how to recognise ours. */
export const HOSTS = {
  opencode: {
    label: "OpenCode",
    entryFile: () => fileURLToPath(new URL("opencode.js", HOSTS_DIR)),
    entry: (file) => pathToFileURL(file).href,
    key: "plugin",
    configFile: ({ project }) => {
      if (project) return opencodeFile(resolve(project));
      const xdg = process.env.XDG_CONFIG_HOME
        ? expandHome(process.env.XDG_CONFIG_HOME)
        : join(homedir(), ".config");
      return opencodeFile(join(xdg, "opencode"));
    },
    seed: '{\n  "$schema": "https://opencode.ai/config.json"\n}\n',
    // Also installed from npm (`opencode plugin smarter-compact`): said, not touched.
    isNpmEntry: (v) => v === "smarter-compact" || v.startsWith("smarter-compact@"),
  },
  pi: {
    label: "Pi",
    entryFile: () => fileURLToPath(new URL("pi.js", HOSTS_DIR)),
    entry: (file) => file,
    key: "extensions",
    configFile: ({ project }) => {
      if (project) return join(resolve(project), ".pi", "settings.json");
      const dir = process.env.PI_CODING_AGENT_DIR
        ? expandHome(process.env.PI_CODING_AGENT_DIR)
        : join(homedir(), ".pi", "agent");
      return join(dir, "settings.json");
    },
    seed: "",
    isNpmEntry: (v) => v === "npm:smarter-compact" || v.startsWith("npm:smarter-compact@"),
  },
};

/** An entry node that names `entry`: the string itself, or a `[entry, options]` tuple. */
const namesEntry = (entry) => (n) =>
  (n.type === "string" && n.value === entry) ||
  (n.type === "array" && n.children?.[0]?.type === "string" && n.children[0].value === entry);

/** Entries of other installs (npm name) in the host's array: for a note. */
function npmEntries(text, host) {
  if (!text) return [];
  try {
    const arr = JSON.parse(text.replace(/^\uFEFF/, ""))?.[host.key];
    return Array.isArray(arr) ? arr.filter((v) => typeof v === "string" && host.isNpmEntry(v)) : [];
  } catch {
    return []; // JSONC with comments: the note is only a courtesy
  }
}

/** `enable <host>` / `disable <host>`: returns the exit code. */
export async function enableCommand({ action, host: name, project }, out) {
  const host = HOSTS[name];
  if (!host)
    throw new UsageError(
      `${action}: the host must be "opencode" or "pi", got ${JSON.stringify(name)}`,
    );
  const entryFile = host.entryFile();
  const entry = host.entry(entryFile);
  const file = host.configFile({ project });
  const before = readIfThere(file);
  const matches = namesEntry(entry);
  if (action === "enable") {
    if (!existsSync(entryFile))
      throw codedError(
        "E_NOT_FOUND",
        `this installation has no ${host.label} entry (${entryFile}); reinstall smarter-compact`,
      );
    const { text, changed } = addEntry(before ?? host.seed, host.key, entry, matches, file);
    if (!changed) {
      out(`${host.label}: smarter-compact is already enabled in ${file}; nothing changed`);
      return 0;
    }
    writeAtomic(file, text);
    out(`${host.label}: enabled smarter-compact in ${file}${before === null ? " (created)" : ""}`);
    out(`  "${host.key}" += ${JSON.stringify(entry)}`);
    for (const v of npmEntries(before, host))
      out(
        `note: ${JSON.stringify(v)} is also listed there; the plugin would load twice — remove one of them`,
      );
    return 0;
  }
  if (before === null) {
    out(
      `${host.label}: ${file} does not exist; smarter-compact is not enabled there; nothing changed`,
    );
    return 0;
  }
  const { text, changed } = removeEntry(before, host.key, matches, file);
  if (changed) {
    writeAtomic(file, text);
    out(`${host.label}: disabled smarter-compact in ${file}`);
    out(`  "${host.key}" -= ${JSON.stringify(entry)}`);
  } else out(`${host.label}: smarter-compact is not enabled in ${file}; nothing changed`);
  for (const v of npmEntries(changed ? text : before, host))
    out(
      `note: ${JSON.stringify(v)} is still listed there (installed from npm); remove it with the host's own command`,
    );
  return 0;
}
