// `smarter-compact enable|disable embeddings`: installs the optional embedder package,
// smarter-compact-embed of the same version, beside every install of smarter-compact found, or
// takes it out again. Where: this command's own install (when it sits in a node_modules that is
// not npx's cache), and each host's (js/embedder-package.js `installPlaces`: OpenCode's plugin
// installs, Pi's npm folders, the global npm root) that holds smarter-compact. npm runs with the
// user's own configuration (registry, proxy, prefix), so a private registry set there is used.
// Idempotent: a place that already has the package of that version is left alone.
import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CORE_PACKAGE,
  EMBED_PACKAGE,
  embeddingsState,
  globalRoot,
  installPlaces,
  packageAt,
} from "../embedder-package.js";

const real = (p) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** This command's own install as a place, or null (a checkout, or npx's throw-away cache). */
function ownPlace() {
  const core = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
  const nodeModules = dirname(real(core));
  if (basename(nodeModules) !== "node_modules" || nodeModules.includes("/_npx/")) return null;
  const global = nodeModules === real(globalRoot());
  return {
    host: "this",
    label: "this install",
    nodeModules,
    prefix: global ? dirname(dirname(nodeModules)) : dirname(nodeModules),
    global,
  };
}

/** The installs of smarter-compact to put the embedder beside: `[{ label, prefix, nodeModules,
 * global, core }]` (`core`: that install's version), each once. */
export function embedderTargets({ project } = {}) {
  const seen = new Set();
  const out = [];
  for (const p of [ownPlace(), ...installPlaces({ cwd: project })]) {
    if (!p) continue;
    const core = packageAt(join(p.nodeModules, CORE_PACKAGE));
    const key = real(p.nodeModules);
    if (core?.name !== CORE_PACKAGE || seen.has(key)) continue;
    seen.add(key);
    out.push({ ...p, core: core.version });
  }
  return out;
}

/** Runs npm; resolves to `{ code, output }` (its stdout and stderr). */
function npm(args) {
  return new Promise((resolve) => {
    execFile(
      "npm",
      args,
      { env: process.env, maxBuffer: 16 << 20, timeout: 600_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : 1) : 0,
          output: `${stdout}${stderr}${error && !stderr ? error.message : ""}`.trim(),
        }),
    );
  });
}

/** npm's arguments for one place: `install <spec>` or `uninstall <name>` there. */
function npmArgs(action, spec, place) {
  const where = place.global ? ["-g", "--prefix", place.prefix] : ["--prefix", place.prefix];
  // Pi installs its packages with --legacy-peer-deps; a plain install would re-check their peers.
  const peers = place.host === "pi" ? ["--legacy-peer-deps"] : [];
  return [action, spec, ...where, ...peers, "--no-audit", "--no-fund"];
}

/** `enable embeddings` / `disable embeddings [--project DIR]`: returns the exit code (1 when an
 * npm run failed, or there is no install of smarter-compact to put the embedder beside). */
export async function embeddingsCommand({ action, project }, out) {
  const targets = embedderTargets({ project });
  if (!targets.length) {
    const looked = installPlaces({ cwd: project }).map((p) => p.nodeModules);
    out(
      `no install of ${CORE_PACKAGE} found to put ${EMBED_PACKAGE} beside (looked in ${looked.join(", ")}); install ${CORE_PACKAGE} first (npm install -g ${CORE_PACKAGE}, or through OpenCode or Pi)`,
    );
    return 1;
  }
  let failed = 0;
  for (const t of targets) {
    const where = `${t.label} (${t.nodeModules})`;
    const have = packageAt(join(t.nodeModules, EMBED_PACKAGE));
    const spec = `${EMBED_PACKAGE}@${t.core}`;
    if (action === "enable" && have?.name === EMBED_PACKAGE && have.version === t.core) {
      out(`${where}: ${spec} is already installed; nothing changed`);
      continue;
    }
    if (action === "disable" && have?.name !== EMBED_PACKAGE) {
      out(`${where}: ${EMBED_PACKAGE} is not installed; nothing changed`);
      continue;
    }
    const args = npmArgs(
      action === "enable" ? "install" : "uninstall",
      action === "enable" ? spec : EMBED_PACKAGE,
      t,
    );
    out(`${where}: npm ${args.join(" ")}`);
    const r = await npm(args);
    if (r.code === 0) {
      const now = packageAt(join(t.nodeModules, EMBED_PACKAGE));
      out(
        action === "enable"
          ? `  installed ${EMBED_PACKAGE} ${now?.version ?? "?"} beside ${CORE_PACKAGE} ${t.core}`
          : `  removed ${EMBED_PACKAGE}`,
      );
    } else {
      failed++;
      out(`  npm failed (exit ${r.code}):`);
      for (const line of r.output.split("\n").slice(-12)) out(`    ${line}`);
    }
  }
  out((await embeddingsState()).line.replace(/^embeddings/, "embeddings for this install"));
  out("hosts load it (or stop loading it) on their next start");
  return failed ? 1 : 0;
}
