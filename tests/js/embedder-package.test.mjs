// Where the core finds the optional embedder package (js/embedder-package.js), and what `status`,
// `doctor` and `enable|disable embeddings` say about it. The places a host installs into are
// built in scratch homes; a copy of the core outside any node_modules stands for an install whose
// own module resolution finds nothing.
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { test } from "node:test";
import { createEmbedder } from "../../npm/js/embedder.js";
import { findEmbedderPackage } from "../../npm/js/embedder-package.js";
import { run, tempDir } from "./helpers/cli.mjs";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const VERSION = JSON.parse(readFileSync(join(REPO, "npm", "package.json"), "utf8")).version;

/** A package.json of `name`@`version` in `dir` (created). */
function manifest(dir, name, version) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version, type: "module" }));
}

/** A stand-in smarter-compact-embed of `version` in `dir`: the real entry, a stub wasm file. */
function fakeEmbed(dir, version = VERSION) {
  manifest(dir, "smarter-compact-embed", version);
  copyFileSync(join(REPO, "npm-embed", "index.js"), join(dir, "index.js"));
  mkdirSync(join(dir, "pkg-embed"));
  writeFileSync(join(dir, "pkg-embed", "smarter_compact_bg.wasm"), "");
}

/** A copy of the core's package.json and resolver outside any node_modules: its finder. */
async function detachedFinder() {
  const core = join(tempDir("sc-core-copy-"), "core");
  mkdirSync(join(core, "js"), { recursive: true });
  copyFileSync(join(REPO, "npm", "package.json"), join(core, "package.json"));
  copyFileSync(
    join(REPO, "npm", "js", "embedder-package.js"),
    join(core, "js", "embedder-package.js"),
  );
  return (await import(pathToFileURL(join(core, "js", "embedder-package.js")).href))
    .findEmbedderPackage;
}

/** Runs `fn` with these environment variables (undefined: unset), then restores them. */
async function withEnv(vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v) => {
    for (const [k, x] of Object.entries(v))
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

const bare = (home) => ({
  HOME: home,
  SMARTER_COMPACT_EMBED_DIR: undefined,
  XDG_CACHE_HOME: undefined,
  PI_CODING_AGENT_DIR: undefined,
  npm_config_prefix: join(home, "npm-global"),
  NPM_CONFIG_PREFIX: undefined,
});

test("a checkout finds npm-embed/ through node_modules/smarter-compact-embed, of the core's version", async () => {
  const found = await withEnv({ SMARTER_COMPACT_EMBED_DIR: undefined }, () =>
    findEmbedderPackage(),
  );
  assert.equal(found.found, true, found.why);
  assert.equal(realpathSync(found.dir), realpathSync(join(REPO, "npm-embed")));
  assert.equal(found.version, VERSION);
  assert.equal(found.via, "beside smarter-compact");
  assert.equal(realpathSync(found.modelDir), realpathSync(join(REPO, "npm-embed", "models")));
});

test("an explicit folder without the package means no embedder: E_NO_MODEL before any worker", async () => {
  const dir = tempDir("sc-no-embed-");
  const found = await findEmbedderPackage({ dir });
  assert.equal(found.found, false);
  assert.equal(found.why, `${dir} (the embedDir option) holds no smarter-compact-embed`);
  await assert.rejects(createEmbedder({ embedDir: dir }), (e) => {
    assert.equal(e.code, "E_NO_MODEL");
    assert.match(e.message, /holds no smarter-compact-embed/);
    return true;
  });
  const viaEnv = await withEnv({ SMARTER_COMPACT_EMBED_DIR: dir }, () => findEmbedderPackage());
  assert.match(viaEnv.why, /\(SMARTER_COMPACT_EMBED_DIR\) holds no/);
});

test("without a sibling: OpenCode's, Pi's and the global install folders, in that order; only this version", async () => {
  const find = await detachedFinder();
  const home = tempDir("sc-embed-home-");
  const oc = join(home, ".cache", "opencode", "packages", "smarter-compact@latest", "node_modules");
  const pi = join(home, ".pi", "agent", "npm", "node_modules");
  const global = join(home, "npm-global", "lib", "node_modules");
  await withEnv(bare(home), async () => {
    const none = await find();
    assert.deepEqual(none, {
      found: false,
      why: "smarter-compact-embed not installed; `smarter-compact enable embeddings` adds it",
    });
    fakeEmbed(join(global, "smarter-compact-embed"));
    assert.equal((await find()).dir, join(global, "smarter-compact-embed"));
    assert.equal((await find()).via, "global npm's install folder");
    fakeEmbed(join(pi, "smarter-compact-embed"));
    assert.equal((await find()).via, "Pi's install folder");
    fakeEmbed(join(oc, "smarter-compact-embed"), "0.0.1");
    assert.equal((await find()).via, "Pi's install folder", "another version is passed over");
  });
  // Only the other version left: it is named, with the command that fixes it.
  const lone = tempDir("sc-embed-home-");
  const ocOnly = join(lone, "cache", "opencode", "packages", "smarter-compact@0.1.0");
  fakeEmbed(join(ocOnly, "node_modules", "smarter-compact-embed"), "0.0.1");
  await withEnv({ ...bare(lone), XDG_CACHE_HOME: join(lone, "cache") }, async () => {
    const r = await find();
    assert.equal(r.found, false);
    assert.match(
      r.why,
      /^smarter-compact-embed 0\.0\.1 at .* is not this version \(\d+\.\d+\.\d+\); `smarter-compact enable embeddings` installs the matching one$/,
    );
  });
});

test("status and doctor say in one line whether embeddings are on, and from where", () => {
  const state = tempDir("sc-embed-state-");
  const off = run(["status", "--state-dir", state], {
    env: { SMARTER_COMPACT_EMBED_DIR: join(state, "nothing") },
  });
  assert.equal(off.code, 0, off.stderr);
  assert.equal(
    off.stdout.trimEnd().split("\n").at(-1),
    `embeddings: off — ${join(state, "nothing")} (SMARTER_COMPACT_EMBED_DIR) holds no smarter-compact-embed; full-text search only`,
  );
  // The checkout's link, with the model folder of the package (no SMARTER_COMPACT_MODEL_DIR).
  const on = run(["status", "--state-dir", state, "--json"], {
    env: { SMARTER_COMPACT_MODEL_DIR: join(REPO, "npm-embed", "models") },
  });
  const e = JSON.parse(on.stdout).embeddings;
  assert.equal(e.on, true, e.line);
  assert.match(
    e.line,
    /^embeddings: on — smarter-compact-embed \S+ at \S+npm-embed \(beside smarter-compact\), model \S+minilm-l6-v2-int8\.onnx$/,
  );
  const doctor = run(["doctor", "--json", "--state-dir", state], {
    env: { SMARTER_COMPACT_DOCTOR_PATH: "", SMARTER_COMPACT_EMBED_DIR: join(state, "nothing") },
  });
  const f = JSON.parse(doctor.stdout).findings.filter((x) => x.check === "embeddings");
  assert.deepEqual(
    f.map((x) => [x.status, x.message]),
    [["ok", off.stdout.trimEnd().split("\n").at(-1)]],
  );
});

test("enable|disable embeddings: nothing to do where it is there; no install of the core, exit 1", () => {
  const home = tempDir("sc-embed-cli-");
  const agent = join(home, "agent");
  const env = { HOME: home, PI_CODING_AGENT_DIR: agent, npm_config_prefix: join(home, "g") };
  const none = run(["enable", "embeddings"], { env });
  assert.equal(none.code, 1, none.stdout + none.stderr);
  assert.match(
    none.stdout,
    /^no install of smarter-compact found to put smarter-compact-embed beside \(looked in /,
  );
  // Pi's npm folder with the core and the embedder of its version: idempotent, nothing run.
  const modules = join(agent, "npm", "node_modules");
  manifest(join(modules, "smarter-compact"), "smarter-compact", VERSION);
  fakeEmbed(join(modules, "smarter-compact-embed"));
  for (let i = 0; i < 2; i++) {
    const again = run(["enable", "embeddings"], { env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(
      again.stdout.split("\n")[0],
      `Pi (${modules}): smarter-compact-embed@${VERSION} is already installed; nothing changed`,
    );
    assert.ok(!again.stdout.includes("npm install"), again.stdout);
  }
  const bareHome = tempDir("sc-embed-cli-");
  const piOnly = join(bareHome, "agent", "npm", "node_modules");
  manifest(join(piOnly, "smarter-compact"), "smarter-compact", VERSION);
  const off = run(["disable", "embeddings"], {
    env: { ...env, HOME: bareHome, PI_CODING_AGENT_DIR: join(bareHome, "agent") },
  });
  assert.equal(off.code, 0, off.stdout + off.stderr);
  assert.equal(
    off.stdout.split("\n")[0],
    `Pi (${piOnly}): smarter-compact-embed is not installed; nothing changed`,
  );
});

test("doctor says, per host, whether the embedder sits beside that host's npm install", () => {
  const home = tempDir("sc-embed-doctor-");
  const agent = join(home, "agent");
  mkdirSync(agent, { recursive: true });
  writeFileSync(
    join(agent, "settings.json"),
    JSON.stringify({ packages: ["npm:smarter-compact"] }),
  );
  const modules = join(agent, "npm", "node_modules");
  manifest(join(modules, "smarter-compact"), "smarter-compact", VERSION);
  const env = { HOME: home, PI_CODING_AGENT_DIR: agent, SMARTER_COMPACT_DOCTOR_PATH: "" };
  const piLine = () => {
    const r = run(["doctor", "--json", "--state-dir", join(home, "state")], { env });
    const f = JSON.parse(r.stdout).findings.filter(
      (x) => x.host === "pi" && x.check === "embeddings",
    );
    assert.equal(f.length, 1, r.stdout);
    assert.equal(f[0].status, "ok");
    return f[0].message;
  };
  assert.equal(
    piLine(),
    `Pi: embeddings off — no smarter-compact-embed beside its install in ${modules}; \`smarter-compact enable embeddings\` adds it`,
  );
  fakeEmbed(join(modules, "smarter-compact-embed"));
  assert.equal(
    piLine(),
    `Pi: embeddings on — smarter-compact-embed ${VERSION} beside its install (${join(modules, "smarter-compact-embed")})`,
  );
});
