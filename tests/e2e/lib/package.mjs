// The npm packages as a user gets them: `npm pack` of the built npm/ (smarter-compact, the core)
// and npm-embed/ (smarter-compact-embed, the optional embedder and its model), installed into an
// empty project: the core alone (what the host end-to-end tests load the plugin from, never from
// the source tree), or both side by side.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { scratchDir } from "../../js/helpers/scratch.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const packed = {};
const installed = {};

const npm = (args, cwd) =>
  execFileSync("npm", args, { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });

/**
 * `npm pack` of npm/ (`which` "core") or npm-embed/ ("embed"), once per process: `{ root, tarball,
 * name, version, size, unpackedSize, files }` (`size`: the tarball's bytes; `files`: its paths).
 */
export function packedTarball(which = "core") {
  if (packed[which]) return packed[which];
  const root = scratchDir(`sc-pack-${which}-`);
  const dir = path.join(REPO, which === "core" ? "npm" : "npm-embed");
  const [info] = JSON.parse(npm(["pack", "--json", "--pack-destination", root], dir));
  packed[which] = {
    root,
    tarball: path.join(root, info.filename),
    name: info.name,
    version: info.version,
    size: info.size,
    unpackedSize: info.unpackedSize,
    files: info.files.map((f) => f.path),
  };
  return packed[which];
}

/**
 * Installs the packed core (with `embed`: and the packed embedder beside it) into a fresh project,
 * once per process each: `{ tarball, project, dir, embedDir }` (`embedDir`: null without it).
 */
export function installedPackage({ embed = false } = {}) {
  const key = embed ? "both" : "core";
  if (installed[key]) return installed[key];
  const core = packedTarball("core");
  const tarballs = [core.tarball, ...(embed ? [packedTarball("embed").tarball] : [])];
  const project = scratchDir(`sc-consumer-${key}-`);
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  npm(["install", "--no-audit", "--no-fund", "--omit=dev", ...tarballs], project);
  const modules = path.join(project, "node_modules");
  installed[key] = {
    tarball: core.tarball,
    project,
    dir: path.join(modules, "smarter-compact"),
    embedDir: embed ? path.join(modules, "smarter-compact-embed") : null,
  };
  return installed[key];
}
