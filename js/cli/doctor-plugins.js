// `doctor` for the plugin hosts, OpenCode and Pi: which config files exist, whether smarter-compact
// is registered in them (a path entry whose file must exist, or an npm entry the host must have
// installed), and which rival context plugins sit beside it. Nothing is written.
//
// Where the hosts keep things (read from OpenCode 1.18.33's binary and Pi 1.6.0 / 0.73.1's source):
// - OpenCode loads `config.json`, `opencode.json`, `opencode.jsonc` from $XDG_CONFIG_HOME/opencode
//   (plus $OPENCODE_CONFIG, $OPENCODE_CONFIG_DIR), then `opencode.json[c]` from the project up to
//   its repository root and from `.opencode/` folders. `"plugin"` holds strings or
//   `[spec, options]`; an npm spec is installed into
//   $XDG_CACHE_HOME/opencode/packages/<name>@latest (or <spec> when it names a version)/node_modules/<name>.
//   When the install fails (a 404, no network) OpenCode still exits 0 and loads nothing.
// - Pi reads `<agent dir>/settings.json` ($PI_CODING_AGENT_DIR, else ~/.pi/agent) and
//   `<project>/.pi/settings.json`: `"extensions"` (paths; `!`, `-` exclude, `+` forces) and
//   `"packages"` (what `pi install` writes: "npm:<name>", or `{ source }`). Pi 1.x installs npm
//   packages into `<agent dir>/npm/node_modules` (project: `.pi/npm/node_modules`); Pi 0.73 with
//   `npm install -g`, into the global node_modules. Files in `<agent dir>/extensions/` load too.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HOSTS } from "./enable.js";
import {
  envVar,
  expandHome,
  finding,
  isDir,
  isPackageDir,
  onPath,
  readConfigObject,
  rivalOf,
} from "./doctor-common.js";

const NAME = "smarter-compact";

/** The files of OpenCode's configuration that exist, in the order OpenCode merges them. */
export function opencodeFiles(projectDir) {
  const globalDir = dirname(HOSTS.opencode.configFile({}));
  const files = ["config.json", "opencode.json", "opencode.jsonc"].map((f) => join(globalDir, f));
  if (envVar("OPENCODE_CONFIG")) files.push(resolve(expandHome(envVar("OPENCODE_CONFIG"))));
  const up = [];
  for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
    up.unshift(dir);
    if (existsSync(join(dir, ".git")) || dirname(dir) === dir) break;
  }
  for (const dir of up) files.push(join(dir, "opencode.json"), join(dir, "opencode.jsonc"));
  for (const dir of up)
    files.push(join(dir, ".opencode", "opencode.json"), join(dir, ".opencode", "opencode.jsonc"));
  if (envVar("OPENCODE_CONFIG_DIR")) {
    const dir = resolve(expandHome(envVar("OPENCODE_CONFIG_DIR")));
    files.push(join(dir, "opencode.json"), join(dir, "opencode.jsonc"));
  }
  return { globalDir, files: [...new Set(files)].filter((f) => existsSync(f)) };
}

/** The local path a plugin entry names (file: URL, absolute, `~/`, relative), or null for a
 * package spec. */
function entryPath(spec, baseDir) {
  if (spec.startsWith("file:")) {
    try {
      return fileURLToPath(spec);
    } catch {
      return resolve(baseDir, expandHome(spec.replace(/^file:(\/\/)?/, "")));
    }
  }
  if (/^(\/|\.{1,2}(\/|$)|~(\/|$))/.test(spec)) return resolve(baseDir, expandHome(spec));
  return null;
}

/** `name` and `version` ("latest" when absent) of an npm spec such as `@scope/x@1.2`. */
function npmSpec(spec) {
  const at = spec.indexOf("@", 1);
  return at > 0
    ? { name: spec.slice(0, at), version: spec.slice(at + 1) || "latest" }
    : { name: spec, version: "latest" };
}

/** True when a local path is a copy of smarter-compact (its host entry or its package folder). */
function isOurPath(path, ownFile, hostFile) {
  return (
    path === ownFile ||
    path.includes(NAME) ||
    path.endsWith(`/js/hosts/${hostFile}`) ||
    isPackageDir(path, NAME)
  );
}

/** Findings about one host's entries: ours (registered, installed), duplicates, rivals. */
function entryFindings(host, label, keys, ours, rivals, fixMissing) {
  const findings = [];
  if (!ours.length)
    findings.push(
      finding(
        host,
        "registered",
        "fail",
        `${label}: smarter-compact is not registered (no entry in ${keys} of its config files)`,
        `smarter-compact enable ${host}`,
      ),
    );
  for (const e of ours) {
    if (e.installed)
      findings.push(
        finding(
          host,
          "registered",
          "ok",
          `${label}: registered in ${e.file} as ${JSON.stringify(e.spec)} (${e.where})`,
        ),
      );
    else findings.push(finding(host, "installed", "fail", `${label}: ${e.problem}`, fixMissing(e)));
  }
  if (ours.length > 1)
    findings.push(
      finding(
        host,
        "registered",
        "warn",
        `${label}: smarter-compact is listed ${ours.length} times (${ours.map((e) => JSON.stringify(e.spec)).join(", ")}); it would load twice`,
        `keep one: remove ${JSON.stringify(ours[1].spec)} from "${ours[1].key}" in ${ours[1].file}`,
      ),
    );
  for (const r of rivals)
    findings.push(
      finding(
        host,
        "rival",
        ours.length ? "fail" : "warn",
        `${label}: ${JSON.stringify(r.spec)} (${r.label}) is registered in ${r.file}${ours.length ? " beside smarter-compact" : ""}; both rewrite the same history, undoing each other's cuts and the prompt cache`,
        r.dir
          ? `move ${r.spec} out of ${r.dir}`
          : `remove ${JSON.stringify(r.spec)} from "${r.key}" in ${r.file}`,
      ),
    );
  return findings;
}

/** Findings for config files that cannot be read. */
function unreadable(host, label, bad) {
  return bad.map(({ file, error }) =>
    finding(
      host,
      "config",
      "fail",
      `${label}: cannot read ${file}: ${error}`,
      `correct ${file} (${label} cannot read it either) or move it away`,
    ),
  );
}

/** Reads each file; returns the parsed ones and the unreadable ones. */
function readAll(files, jsonc) {
  const read = [];
  const bad = [];
  for (const file of files) {
    const { value, error } = readConfigObject(file, { jsonc });
    if (error) bad.push({ file, error });
    else if (value) read.push({ file, value });
  }
  return { read, bad };
}

/** OpenCode: `{ host, findings, configs, installDir }` (`configs`: the parsed files, for the
 * compaction check; `installDir`: OpenCode's npm install of smarter-compact, or null). */
export function checkOpencode({ projectDir }) {
  const { globalDir, files } = opencodeFiles(projectDir);
  const binary = onPath("opencode");
  const found = isDir(globalDir) || binary !== null || files.length > 0;
  const host = { found, registered: false, via: null, config_file: null, installed: null };
  if (!found) return { host: { ...host, backend: null }, findings: [], configs: [] };
  const { read, bad } = readAll(files, true);
  const cache = envVar("XDG_CACHE_HOME")
    ? join(expandHome(envVar("XDG_CACHE_HOME")), "opencode")
    : join(homedir(), ".cache", "opencode");
  const ownFile = HOSTS.opencode.entryFile();
  const ours = [];
  const rivals = [];
  for (const { file, value } of read) {
    const list = Array.isArray(value.plugin) ? value.plugin : [];
    for (const raw of list) {
      const spec = typeof raw === "string" ? raw : Array.isArray(raw) ? raw[0] : null;
      if (typeof spec !== "string") continue;
      const path = entryPath(spec, dirname(file));
      const base = { spec, file, key: "plugin" };
      if (path && isOurPath(path, ownFile, "opencode.js")) {
        const there = existsSync(path);
        ours.push({
          ...base,
          via: "path",
          installed: there,
          where: "the file exists",
          problem: `${JSON.stringify(spec)} is registered in ${file} but ${path} does not exist`,
        });
      } else if (!path && npmSpec(spec).name === NAME) {
        const { name, version } = npmSpec(spec);
        const dir = join(cache, "packages", spec === name ? `${name}@latest` : spec);
        const at = [join(dir, "node_modules", name), join(cache, "node_modules", name)].find((d) =>
          isPackageDir(d, name),
        );
        ours.push({
          ...base,
          via: "npm",
          installed: Boolean(at),
          at,
          where: `installed at ${at}`,
          problem: `${JSON.stringify(spec)} is listed in ${file} but OpenCode has no install of it (expected ${join(dir, "node_modules", name)}); OpenCode skips a plugin it could not install without saying so`,
          version,
        });
      } else {
        const rival = rivalOf(spec);
        if (rival) rivals.push({ ...base, label: rival.label });
      }
    }
  }
  const fixMissing = (e) =>
    e.via === "npm"
      ? `opencode plugin ${e.spec} --global   (or use this install: remove ${JSON.stringify(e.spec)} from "plugin" in ${e.file}, then smarter-compact enable opencode)`
      : `remove ${JSON.stringify(e.spec)} from "plugin" in ${e.file}, then smarter-compact enable opencode`;
  const first = ours[0];
  return {
    host: {
      found,
      registered: ours.length > 0,
      via: first?.via ?? null,
      config_file: first?.file ?? read[0]?.file ?? bad[0]?.file ?? null,
      installed: first ? first.installed : null,
      backend: "bun:sqlite",
    },
    findings: [
      ...unreadable("opencode", "OpenCode", bad),
      ...entryFindings("opencode", "OpenCode", '"plugin"', ours, rivals, fixMissing),
    ],
    configs: read,
    installDir: first?.at ?? null,
  };
}

/** Pi's agent dir: $PI_CODING_AGENT_DIR, else ~/.pi/agent. */
export function piAgentDir() {
  return dirname(HOSTS.pi.configFile({}));
}

/** The global node_modules folders an `npm install -g` (Pi 0.73) may have written to. */
function globalRoots(piBinary) {
  const roots = [];
  const prefix = envVar("npm_config_prefix") ?? envVar("NPM_CONFIG_PREFIX");
  if (prefix) roots.push(join(expandHome(prefix), "lib", "node_modules"));
  else roots.push(join(dirname(dirname(process.execPath)), "lib", "node_modules"));
  if (piBinary) {
    try {
      const real = realpathSync(piBinary);
      const at = real.lastIndexOf("/lib/node_modules/");
      if (at >= 0) roots.push(real.slice(0, at + "/lib/node_modules".length));
    } catch {
      // a dangling link: nothing to learn from it
    }
  }
  return [...new Set(roots)];
}

/** Pi: `{ host, findings, configs, binary, installDir }` (`installDir`: Pi's npm install of
 * smarter-compact, or null). */
export function checkPi({ projectDir }) {
  const agentDir = piAgentDir();
  const projectFile = join(resolve(projectDir), ".pi", "settings.json");
  const files = [join(agentDir, "settings.json"), projectFile].filter((f) => existsSync(f));
  const binary = onPath("pi");
  const found = isDir(agentDir) || binary !== null || files.length > 0;
  const host = { found, registered: false, via: null, config_file: null, installed: null };
  if (!found) return { host, findings: [], configs: [], binary };
  const { read, bad } = readAll(files, false);
  const ownFile = HOSTS.pi.entryFile();
  const ours = [];
  const rivals = [];
  const pathEntry = (spec, path, base) => {
    if (isOurPath(path, ownFile, "pi.js"))
      ours.push({
        ...base,
        via: "path",
        installed: existsSync(path),
        where: "the file exists",
        problem: `${JSON.stringify(spec)} is registered in ${base.file} but ${path} does not exist`,
      });
    else if (rivalOf(spec)) rivals.push({ ...base, label: rivalOf(spec).label });
  };
  for (const { file, value } of read) {
    const baseDir = dirname(file);
    const project = file === projectFile;
    for (const raw of Array.isArray(value.extensions) ? value.extensions : []) {
      if (typeof raw !== "string" || /^[!-]/.test(raw)) continue; // exclusions
      const spec = raw.replace(/^\+/, "");
      pathEntry(spec, resolve(baseDir, expandHome(spec)), { spec, file, key: "extensions" });
    }
    for (const raw of Array.isArray(value.packages) ? value.packages : []) {
      const spec = typeof raw === "string" ? raw : raw?.source;
      if (typeof spec !== "string") continue;
      const base = { spec, file, key: "packages" };
      if (spec.startsWith("npm:")) {
        const { name } = npmSpec(spec.slice(4).trim());
        if (name !== NAME) {
          if (rivalOf(name)) rivals.push({ ...base, label: rivalOf(name).label });
          continue;
        }
        const managed = project
          ? join(resolve(projectDir), ".pi", "npm", "node_modules", name)
          : join(agentDir, "npm", "node_modules", name);
        const candidates = [managed, ...globalRoots(binary).map((r) => join(r, name))];
        const at = candidates.find((d) => isPackageDir(d, name));
        ours.push({
          ...base,
          via: "npm",
          installed: Boolean(at),
          at,
          where: `installed at ${at}`,
          problem: `${JSON.stringify(spec)} is listed in ${file} but no install of it was found (looked in ${candidates.join(", ")}); Pi installs missing packages when it starts, and loads nothing if that fails`,
        });
      } else if (/^(git:|https?:|ssh:|git@)/.test(spec)) {
        if (rivalOf(spec)) rivals.push({ ...base, label: rivalOf(spec).label });
      } else pathEntry(spec, resolve(baseDir, expandHome(spec)), base);
    }
  }
  for (const dir of [
    join(agentDir, "extensions"),
    join(resolve(projectDir), ".pi", "extensions"),
  ]) {
    let names = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue; // no such folder
    }
    for (const n of names) {
      const path = join(dir, n);
      const base = { spec: n, file: dir, key: "extensions", dir };
      if (n.includes(NAME))
        ours.push({
          ...base,
          via: "path",
          installed: existsSync(path),
          where: "auto-discovered",
          problem: `${path} is a dangling link`,
        });
      else if (rivalOf(n)) rivals.push({ ...base, label: rivalOf(n).label });
    }
  }
  const fixMissing = (e) =>
    e.via === "npm"
      ? `pi install ${e.spec}   (or use this install: remove ${JSON.stringify(e.spec)} from "packages" in ${e.file}, then smarter-compact enable pi)`
      : e.dir
        ? `rm ${join(e.dir, e.spec)}, then smarter-compact enable pi`
        : `remove ${JSON.stringify(e.spec)} from "${e.key}" in ${e.file}, then smarter-compact enable pi`;
  const first = ours[0];
  return {
    host: {
      found,
      registered: ours.length > 0,
      via: first?.via ?? null,
      config_file: first && !first.dir ? first.file : (read[0]?.file ?? bad[0]?.file ?? null),
      installed: first ? first.installed : null,
    },
    findings: [
      ...unreadable("pi", "Pi", bad),
      ...entryFindings("pi", "Pi", '"extensions" or "packages"', ours, rivals, fixMissing),
    ],
    configs: read,
    binary,
    installDir: first?.at ?? null,
  };
}
