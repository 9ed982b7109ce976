// Where the optional embedder package, smarter-compact-embed (its wasm build and the model), is
// installed: smarter-compact finds it at run time and runs on full-text search without it.
// Looked for, in this order (the first place that holds the package decides):
//   1. the `dir` option, else $SMARTER_COMPACT_EMBED_DIR: the package's folder; when set it is the
//      only place looked at (a folder without the package means no embedder);
//   2. module resolution from this file: a sibling in the node_modules that holds smarter-compact
//      (what `npm install smarter-compact-embed` beside it gives; in a checkout the repository's
//      node_modules/smarter-compact-embed, a link to npm-embed/ that `npm ci` makes);
//   3. the places `smarter-compact enable embeddings` installs into, beside each host's own install
//      of smarter-compact: OpenCode's $XDG_CACHE_HOME/opencode/packages/smarter-compact@*/, Pi 1.x's
//      <agent dir>/npm/ ($PI_CODING_AGENT_DIR, else ~/.pi/agent) and <cwd>/.pi/npm/;
//   4. the global npm root ($npm_config_prefix, else `prefix=` in ~/.npmrc, else Node's own prefix).
// Only a package of this core's version is used; another version is named in `why`.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The embedder package's npm name. */
export const EMBED_PACKAGE = "smarter-compact-embed";
/** The core package's npm name. */
export const CORE_PACKAGE = "smarter-compact";
/** What to run to add the embedder. */
export const ENABLE_COMMAND = "smarter-compact enable embeddings";

const env = (name) => process.env[name] || undefined;
const expandHome = (p) => (p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p);

/** `name` and `version` of the package.json in `dir`, or null when there is none. */
export function packageAt(dir) {
  try {
    const { name, version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    return typeof name === "string" ? { name, version: String(version ?? "") } : null;
  } catch {
    return null;
  }
}

/** This core's version (its package.json, one level above js/). */
export function coreVersion() {
  return packageAt(fileURLToPath(new URL("../", import.meta.url)))?.version ?? "";
}

/** The npm global prefix: $npm_config_prefix, else `prefix=` in the user's npmrc, else Node's. */
export function globalPrefix() {
  const set = env("npm_config_prefix") ?? env("NPM_CONFIG_PREFIX");
  if (set) return resolve(expandHome(set));
  try {
    const rc = readFileSync(env("npm_config_userconfig") ?? join(homedir(), ".npmrc"), "utf8");
    const m = /^\s*prefix\s*=\s*(.+?)\s*$/m.exec(rc);
    if (m) return resolve(expandHome(m[1].replace(/^["']|["']$/g, "")));
  } catch {
    // no user npmrc
  }
  return process.platform === "win32"
    ? dirname(process.execPath)
    : dirname(dirname(process.execPath));
}

/** The global node_modules under `prefix`. */
export const globalRoot = (prefix = globalPrefix()) =>
  process.platform === "win32" ? join(prefix, "node_modules") : join(prefix, "lib", "node_modules");

/**
 * The npm prefixes where hosts install smarter-compact and where `enable embeddings` puts the
 * embedder beside it: `[{ host, label, prefix, global }]` (`node_modules` under each `prefix`;
 * `global`: the npm global root, installed with `npm install -g`). Existing or not.
 */
export function installPlaces({ cwd = process.cwd() } = {}) {
  const places = [];
  const cache = env("XDG_CACHE_HOME")
    ? join(expandHome(env("XDG_CACHE_HOME")), "opencode")
    : join(homedir(), ".cache", "opencode");
  let dirs = [];
  try {
    dirs = readdirSync(join(cache, "packages")).filter(
      (n) => n === CORE_PACKAGE || n.startsWith(`${CORE_PACKAGE}@`),
    );
  } catch {
    // OpenCode never installed an npm plugin here
  }
  for (const n of dirs.sort())
    places.push({ host: "opencode", label: "OpenCode", prefix: join(cache, "packages", n) });
  const agent = env("PI_CODING_AGENT_DIR")
    ? expandHome(env("PI_CODING_AGENT_DIR"))
    : join(homedir(), ".pi", "agent");
  places.push({ host: "pi", label: "Pi", prefix: join(resolve(agent), "npm") });
  places.push({ host: "pi", label: "Pi (project)", prefix: join(resolve(cwd), ".pi", "npm") });
  const prefix = globalPrefix();
  places.push({ host: "global", label: "global npm", prefix, global: true });
  return places.map((p) => ({
    ...p,
    nodeModules: p.global ? globalRoot(p.prefix) : join(p.prefix, "node_modules"),
  }));
}

/** The package folder module resolution gives from this file, or null. */
function resolvedDir() {
  try {
    const require = createRequire(import.meta.url);
    return dirname(require.resolve(`${EMBED_PACKAGE}/package.json`));
  } catch {
    return null;
  }
}

/** Every folder to look in, in order: `[{ dir, via }]`. */
function candidates(option) {
  const explicit = option ?? env("SMARTER_COMPACT_EMBED_DIR");
  if (explicit !== undefined) {
    const dir = resolve(expandHome(String(explicit)));
    const via = option === undefined ? "SMARTER_COMPACT_EMBED_DIR" : "the embedDir option";
    return [{ dir, via, explicit: true }];
  }
  const out = [];
  const resolved = resolvedDir();
  if (resolved) out.push({ dir: resolved, via: "beside smarter-compact" });
  for (const p of installPlaces())
    out.push({ dir: join(p.nodeModules, EMBED_PACKAGE), via: `${p.label}'s install folder` });
  return out;
}

/**
 * Finds the embedder package of this core's version. Resolves to `{ found: true, dir, version,
 * via, wasmPath, gluePath, modelDir, modelFile, tokenizerFile, model }` (the package's own
 * exports), or `{ found: false, why }`: one sentence that says what was looked for and how to add
 * it. Never throws.
 * @param {{ dir?: string }} [options]
 */
export async function findEmbedderPackage({ dir } = {}) {
  const want = coreVersion();
  const list = candidates(dir);
  let other = null;
  for (const c of list) {
    const pkg = packageAt(c.dir);
    if (pkg?.name !== EMBED_PACKAGE) continue;
    if (want && pkg.version !== want) {
      other ??= { ...c, version: pkg.version };
      continue;
    }
    try {
      const entry = await import(pathToFileURL(join(c.dir, "index.js")).href);
      if (!existsSync(entry.wasmPath)) {
        other ??= { ...c, version: pkg.version, broken: `its ${entry.wasmPath} is missing` };
        continue;
      }
      return { found: true, dir: c.dir, via: c.via, ...entry, version: pkg.version };
    } catch (e) {
      other ??= { ...c, version: pkg.version, broken: `it cannot be loaded (${e?.message ?? e})` };
    }
  }
  if (other?.broken)
    return { found: false, why: `${EMBED_PACKAGE} at ${other.dir} is broken: ${other.broken}` };
  if (other)
    return {
      found: false,
      why: `${EMBED_PACKAGE} ${other.version} at ${other.dir} is not this version (${want}); \`${ENABLE_COMMAND}\` installs the matching one`,
    };
  if (list[0]?.explicit)
    return { found: false, why: `${list[0].dir} (${list[0].via}) holds no ${EMBED_PACKAGE}` };
  return {
    found: false,
    why: `${EMBED_PACKAGE} not installed; \`${ENABLE_COMMAND}\` adds it`,
  };
}

/**
 * Whether embeddings are on for this install, as `status` and `doctor` say it: `{ on, line,
 * package }` (`line`: "embeddings: on — …" / "embeddings: off — …"; `package`: the found package
 * or null). `modelDir` (else $SMARTER_COMPACT_MODEL_DIR) replaces the package's model folder.
 */
export async function embeddingsState({ dir, modelDir } = {}) {
  const found = await findEmbedderPackage({ dir });
  if (!found.found)
    return {
      on: false,
      package: null,
      line: `embeddings: off — ${found.why}; full-text search only`,
    };
  const folder = modelDir ?? env("SMARTER_COMPACT_MODEL_DIR") ?? found.modelDir;
  const model = join(String(folder), found.modelFile);
  const missing = [model, join(String(folder), found.tokenizerFile)].filter((f) => !existsSync(f));
  if (missing.length)
    return {
      on: false,
      package: found,
      line: `embeddings: off — ${missing.join(" and ")} not found; full-text search only`,
    };
  return {
    on: true,
    package: found,
    line: `embeddings: on — ${EMBED_PACKAGE} ${found.version} at ${found.dir} (${found.via}), model ${model}`,
  };
}
