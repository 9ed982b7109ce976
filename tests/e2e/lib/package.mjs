// The npm package as a user gets it: `npm pack` of the built npm/ directory, installed into an
// empty project. End-to-end tests load the plugin from there, never from the source tree.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { scratchDir } from "../../js/helpers/scratch.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
let packed = null;
let installed = null;

const npm = (args, cwd) =>
  execFileSync("npm", args, { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });

/** `npm pack` of npm/ (once per process): `{ root, tarball }`, the tarball in a scratch dir. */
export function packedTarball() {
  if (packed) return packed;
  const root = scratchDir("sc-pack-");
  const out = npm(["pack", "--json", "--pack-destination", root], path.join(REPO, "npm"));
  packed = { root, tarball: path.join(root, JSON.parse(out)[0].filename) };
  return packed;
}

/** Packs npm/ and installs the tarball into a fresh project: `{ tarball, project, dir }`. */
export function installedPackage() {
  if (installed) return installed;
  const { root, tarball } = packedTarball();
  const project = path.join(root, "consumer");
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  npm(["install", "--no-audit", "--no-fund", "--omit=dev", tarball], project);
  installed = { tarball, project, dir: path.join(project, "node_modules", "smarter-compact") };
  return installed;
}
