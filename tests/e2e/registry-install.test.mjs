// The install a user actually does: the packed package is published to a local npm registry
// (verdaccio on 127.0.0.1, lib/registry.mjs) and installed BY NAME through every documented route —
// `npm install smarter-compact`, OpenCode's `"plugin": ["smarter-compact"]` and `opencode plugin
// smarter-compact`, `pi install npm:smarter-compact` on Pi 1.x and on Pi 0.73 (`npm install -g`).
// Each home's `~/.npmrc` names the registry, as a user's would. For each route: the host really
// loads it (a scripted request shows the five tools and the standing instruction, the session is
// stored), and `npx smarter-compact doctor --json`, run from the project where npm installed it,
// with HOME/XDG/Pi dirs pointing at the prepared home, reports the plugin registered and installed
// and exits 0. Every route installs the core alone (no embedder); then `smarter-compact enable
// embeddings`, run from that install, fetches smarter-compact-embed of the same version from the
// registry into the same place (a second run changes nothing), `status` there says embeddings
// are on, and each host, started again, answers a forced hybrid search.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, toolNames, toolResults } from "./lib/scripted-server.mjs";
import {
  baseEnv,
  cleanup,
  run,
  runHostCli,
  runOpenCode,
  runPi,
  setupOpenCodeHome,
  setupPiHome,
} from "./lib/hosts.mjs";
import { packedTarball } from "./lib/package.mjs";
import { EMBED_PACKAGE, OWN_PACKAGE, npmEnv, startRegistry } from "./lib/registry.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const FIVE = [
  "smart_compact_search",
  "smart_compact_sql",
  "smart_compact_get",
  "compact_context",
  "context_status",
];
const INSTRUCTION = "[smarter-compact] Older turns of this session may be trimmed";
const VERSION = JSON.parse(
  fs.readFileSync(new URL("../../npm/package.json", import.meta.url), "utf8"),
).version;

let registry = null;
let consumer = null;

before(
  async () => {
    registry = await startRegistry();
    await registry.publish(packedTarball("core").tarball);
    await registry.publish(packedTarball("embed").tarball);
  },
  { timeout: 400_000 },
);

after(async () => {
  await registry?.close();
});

/** A user's project with `npm install smarter-compact` done in it (once per file, shared). */
function consumerProject() {
  consumer ??= installByName();
  return consumer;
}

async function installByName() {
  const root = scratchDir("sc-reg-consumer-");
  const home = path.join(root, "home");
  const project = path.join(root, "project");
  fs.mkdirSync(home);
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(home, ".npmrc"), registry.npmrc);
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  const r = await run("npm", ["install", OWN_PACKAGE, "--no-audit", "--no-fund"], {
    cwd: project,
    env: npmEnv(home),
    timeoutMs: 180_000,
  });
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  return { root, home, project, dir: path.join(project, "node_modules", OWN_PACKAGE) };
}

/** `npx smarter-compact doctor --json` from the consumer project, in `env` (the host's home). */
async function doctor(env, args = []) {
  const c = await consumerProject();
  const r = await run("npx", [OWN_PACKAGE, "doctor", "--json", ...args], {
    cwd: c.project,
    env: {
      ...env,
      // look for no host binary on the PATH: only the prepared config dirs count
      SMARTER_COMPACT_DOCTOR_PATH: "",
      CLAUDE_CONFIG_DIR: path.join(env.HOME, ".claude"),
      CODEX_HOME: path.join(env.HOME, ".codex"),
    },
    timeoutMs: 120_000,
  });
  let report = null;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    assert.fail(`doctor printed no JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
  }
  return { ...r, report };
}

/** The doctor report says `host` has our plugin registered (via npm) and installed, exit 0. */
function assertDoctorOk(d, host) {
  const fails = d.report.findings.filter((f) => f.status === "fail");
  assert.deepEqual(fails, [], `doctor found problems:\n${JSON.stringify(fails, null, 2)}`);
  assert.equal(d.code, 0, d.stderr);
  assert.equal(d.report.ok, true);
  const h = d.report.hosts[host];
  assert.equal(h.found, true, `${host} not found: ${JSON.stringify(d.report.hosts)}`);
  assert.equal(h.registered, true, JSON.stringify(h));
  assert.equal(h.via, "npm", JSON.stringify(h));
  assert.equal(h.installed, true, JSON.stringify(h));
  const ok = d.report.findings.find(
    (f) => f.host === host && f.check === "registered" && f.status === "ok",
  );
  assert.ok(ok, `no "registered ok" finding for ${host}: ${JSON.stringify(d.report.findings)}`);
  return ok;
}

/** doctor's line about the embedder beside `host`'s install: on or off. */
function hostEmbeddings(d, host, on) {
  const f = d.report.findings.filter((x) => x.host === host && x.check === "embeddings");
  assert.equal(f.length, 1, JSON.stringify(d.report.findings));
  assert.equal(f[0].status, "ok");
  assert.match(
    f[0].message,
    on
      ? /: embeddings on — smarter-compact-embed /
      : /: embeddings off — no smarter-compact-embed beside its install/,
  );
}

/** One scripted turn reached the model with the plugin loaded; its session was stored. */
function assertLoaded(srv, stateDir) {
  const q = srv.agentRequests()[0];
  assert.ok(q, "no agent request reached the server");
  for (const name of FIVE) assert.ok(toolNames(q.body).includes(name), `${name} not advertised`);
  assert.ok(JSON.stringify(q.body).includes(INSTRUCTION), "no standing instruction in the request");
  const dir = path.join(stateDir, "context", "sessions");
  const dbs = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".db")) : [];
  assert.equal(dbs.length, 1, `the plugin stored the session: ${dbs}`);
}

/** The install at `dir` is this version, and the lockfile beside it got it from our registry. */
function assertFromRegistry(dir, lockfile, name = OWN_PACKAGE) {
  const pj = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  assert.equal(pj.name, name);
  assert.equal(pj.version, VERSION);
  const lock = JSON.parse(fs.readFileSync(lockfile, "utf8"));
  const entry = Object.entries(lock.packages).find(([k]) => k.endsWith(`node_modules/${name}`));
  assert.ok(entry, `${name} is not in ${lockfile}`);
  assert.ok(
    entry[1].resolved?.startsWith(registry.url),
    `${lockfile}: resolved ${entry[1].resolved}, not from ${registry.url}`,
  );
}

/** True when the npm cache of `homeDir` holds our tarball under the local registry's URL. */
function fetchedByNpm(homeDir) {
  const url = `${registry.url}${OWN_PACKAGE}/-/${OWN_PACKAGE}-${VERSION}.tgz`;
  const index = path.join(homeDir, ".npm", "_cacache", "index-v5");
  if (!fs.existsSync(index)) return false;
  return fs
    .readdirSync(index, { recursive: true, withFileTypes: true })
    .some(
      (e) => e.isFile() && fs.readFileSync(path.join(e.parentPath, e.name), "utf8").includes(url),
    );
}

/**
 * `smarter-compact enable embeddings` from the install at `dir` (its node_modules/smarter-compact),
 * in `env`: smarter-compact-embed of this version lands beside it, from the registry (`lockfile`:
 * the lockfile npm keeps there, null for a global install); run again, nothing changes; `status`
 * from that install says embeddings are on, from that folder.
 */
async function enableEmbeddings(dir, env, lockfile) {
  const cli = path.join(dir, "js", "cli.js");
  const embedDir = path.join(path.dirname(dir), EMBED_PACKAGE);
  assert.ok(!fs.existsSync(embedDir), "the host installed the core alone");
  const first = await run(process.execPath, [cli, "enable", "embeddings"], {
    env,
    timeoutMs: 300_000,
  });
  assert.equal(first.code, 0, first.stdout + first.stderr);
  assert.ok(
    first.stdout.includes(`installed ${EMBED_PACKAGE} ${VERSION} beside ${OWN_PACKAGE} ${VERSION}`),
    first.stdout,
  );
  if (lockfile) assertFromRegistry(embedDir, lockfile, EMBED_PACKAGE);
  else {
    const pj = JSON.parse(fs.readFileSync(path.join(embedDir, "package.json"), "utf8"));
    assert.equal(pj.version, VERSION);
  }
  const second = await run(process.execPath, [cli, "enable", "embeddings"], { env });
  assert.equal(second.code, 0, second.stdout + second.stderr);
  assert.match(second.stdout, /is already installed; nothing changed/);
  assert.ok(!second.stdout.includes("npm install"), second.stdout);
  const status = await run(process.execPath, [cli, "status"], { env });
  assert.equal(status.code, 0, status.stderr);
  const line = status.stdout.trimEnd().split("\n").at(-1);
  assert.ok(
    line.startsWith(`embeddings: on — ${EMBED_PACKAGE} ${VERSION} at ${fs.realpathSync(embedDir)}`),
    line,
  );
  return first.stdout;
}

/**
 * The host started again after `enable embeddings` (`runTurn`) runs a forced hybrid search: its
 * plugin found the embedder beside it, so the tool's answer is ranked "hybrid" (without it the
 * call is an E_NO_MODEL error).
 */
async function assertHybridInHost(srv, runTurn) {
  srv.push(
    { tool: "smart_compact_search", args: { query: "echo hi", scope: "all", mode: "hybrid" } },
    { text: "done" },
  );
  const seen = srv.agentRequests().length;
  const r = await runTurn();
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  const answers = srv
    .agentRequests()
    .slice(seen)
    .flatMap((q) => toolResults(q.body))
    .map((t) => t.text);
  const search = answers.find((t) => t.includes("Stored session data matching"));
  assert.ok(search, `no search answer reached the model: ${JSON.stringify(answers)}`);
  assert.match(search, /in the whole session \(hybrid/, search);
}

const script = () => [{ tool: "bash", args: { command: "echo hi" } }, { text: "done" }];

test("npm install smarter-compact: by name from the registry, the bin runs through npx", async () => {
  const c = await consumerProject();
  assertFromRegistry(c.dir, path.join(c.project, "package-lock.json"));
  assert.ok(
    fs.existsSync(path.join(c.project, "node_modules", ".bin", OWN_PACKAGE)),
    "no bin link",
  );
  const help = await run("npx", [OWN_PACKAGE, "help"], { cwd: c.project, env: npmEnv(c.home) });
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /doctor \[--json\]/);
  // No host prepared: doctor finds none, says so as a warning, and nothing needs action.
  const d = await doctor(baseEnv(path.join(c.root, "empty-home")));
  assert.equal(d.code, 0, d.stdout);
  assert.ok(
    Object.values(d.report.hosts).every((h) => !h.found),
    JSON.stringify(d.report.hosts),
  );
  assert.ok(d.report.findings.some((f) => f.check === "hosts" && f.status === "warn"));
  const off = d.report.findings.find((f) => f.check === "embeddings");
  assert.match(off.message, /^embeddings: off — smarter-compact-embed not installed/);
  // The project's own install: npm adds the embedder to the project's package.json.
  const env = npmEnv(c.home, { npm_config_prefix: path.join(c.root, "npm-global") });
  await enableEmbeddings(c.dir, env, path.join(c.project, "package-lock.json"));
  const deps = JSON.parse(fs.readFileSync(path.join(c.project, "package.json"), "utf8"));
  assert.ok(deps.dependencies[EMBED_PACKAGE], JSON.stringify(deps));
});

/** An OpenCode home whose user npm config names the registry. */
function openCodeHome(server, config = {}) {
  const home = setupOpenCodeHome({ server, config });
  fs.writeFileSync(path.join(home.home, ".npmrc"), registry.npmrc);
  return home;
}

async function openCodeTurn(home, srv) {
  const stateDir = path.join(home.root, "state");
  const r = await runOpenCode({
    home,
    prompt: "run echo hi",
    env: { SMARTER_COMPACT_STATE_DIR: stateDir },
  });
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  assertLoaded(srv, stateDir);
  return { ...baseEnv(home.home), SMARTER_COMPACT_STATE_DIR: stateDir };
}

test(
  'OpenCode 1.18: "plugin": ["smarter-compact"] installs it from the registry and loads it; doctor ok',
  { timeout: 600_000 },
  async () => {
    const srv = await startServer({ script: script() });
    const home = openCodeHome(srv, { plugin: [OWN_PACKAGE] });
    try {
      const env = await openCodeTurn(home, srv);
      // OpenCode installs npm plugins into $XDG_CACHE_HOME/opencode/packages/<name>@latest.
      const at = path.join(home.home, ".cache", "opencode", "packages", `${OWN_PACKAGE}@latest`);
      assertFromRegistry(
        path.join(at, "node_modules", OWN_PACKAGE),
        path.join(at, "package-lock.json"),
      );
      const before = await doctor(env);
      const ok = assertDoctorOk(before, "opencode");
      assert.ok(ok.message.includes(path.join(home.configDir, "opencode.json")), ok.message);
      hostEmbeddings(before, "opencode", false);
      // From OpenCode's own install: the embedder goes into the same packages folder.
      const out = await enableEmbeddings(
        path.join(at, "node_modules", OWN_PACKAGE),
        npmEnv(home.home, {
          XDG_CACHE_HOME: path.join(home.home, ".cache"),
          npm_config_prefix: path.join(home.root, "npm-global"),
        }),
        path.join(at, "package-lock.json"),
      );
      assert.ok(out.startsWith(`this install (${path.join(at, "node_modules")})`), out);
      hostEmbeddings(await doctor(env), "opencode", true);
      await assertHybridInHost(srv, () =>
        runOpenCode({
          home,
          prompt: "search",
          env: { SMARTER_COMPACT_STATE_DIR: env.SMARTER_COMPACT_STATE_DIR },
          timeoutMs: 180_000,
        }),
      );
    } finally {
      await srv.close();
      cleanup(home);
    }
  },
);

test(
  "OpenCode 1.18: `opencode plugin smarter-compact` adds it to the project and installs it; doctor ok",
  { timeout: 600_000 },
  async () => {
    const srv = await startServer({ script: script() });
    const home = openCodeHome(srv);
    try {
      const r = await runHostCli(home, ["plugin", OWN_PACKAGE]);
      assert.equal(r.code, 0, r.stderr.slice(-2000));
      assert.match(r.stdout, new RegExp(`Installed ${OWN_PACKAGE}`));
      // The default scope is the project: <cwd>/.opencode/opencode.json; the global file is untouched.
      const projectFile = path.join(home.proj, ".opencode", "opencode.json");
      assert.deepEqual(JSON.parse(fs.readFileSync(projectFile, "utf8")).plugin, [OWN_PACKAGE]);
      const globalCfg = JSON.parse(
        fs.readFileSync(path.join(home.configDir, "opencode.json"), "utf8"),
      );
      assert.deepEqual(globalCfg.plugin, []);
      const env = await openCodeTurn(home, srv);
      const ok = assertDoctorOk(await doctor(env, ["--project", home.proj]), "opencode");
      assert.ok(ok.message.includes(projectFile), ok.message);
    } finally {
      await srv.close();
      cleanup(home);
    }
  },
);

for (const legacy of [false, true]) {
  const name = legacy ? "Pi 0.73 (Node 20)" : "Pi 1.x (Node 22)";
  test(
    `${name}: \`pi install npm:smarter-compact\` installs it from the registry; Pi loads it; doctor ok`,
    { timeout: 600_000 },
    async () => {
      const srv = await startServer({ script: script() });
      const home = setupPiHome({ server: srv });
      fs.writeFileSync(path.join(home.home, ".npmrc"), registry.npmrc);
      // Pi 0.73 runs `npm install -g`: the global prefix is a scratch dir, as a user's own would be.
      const prefix = path.join(home.root, "npm-global");
      const npmPrefix = legacy ? { npm_config_prefix: prefix } : {};
      try {
        const r = await runHostCli(home, ["install", `npm:${OWN_PACKAGE}`], {
          legacy,
          env: npmPrefix,
        });
        assert.equal(r.code, 0, r.stderr.slice(-2000));
        const settings = JSON.parse(
          fs.readFileSync(path.join(home.agentDir, "settings.json"), "utf8"),
        );
        assert.deepEqual(settings.packages, [`npm:${OWN_PACKAGE}`]);
        // Pi 1.x: npm --prefix <agent dir>/npm (with a lockfile); Pi 0.73: npm -g (none: the
        // tarball's URL is then read from the npm cache of the home).
        const root = legacy ? path.join(prefix, "lib") : path.join(home.agentDir, "npm");
        const dir = path.join(root, "node_modules", OWN_PACKAGE);
        if (legacy) {
          const pj = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
          assert.equal(pj.version, VERSION);
          assert.ok(
            fetchedByNpm(home.home),
            "npm did not fetch the tarball from the local registry",
          );
        } else assertFromRegistry(dir, path.join(root, "package-lock.json"));
        const stateDir = path.join(home.root, "state");
        const run1 = await runPi({
          home,
          legacy,
          discover: true,
          prompt: "run echo hi",
          env: { ...npmPrefix, SMARTER_COMPACT_STATE_DIR: stateDir },
        });
        assert.equal(run1.code, 0, run1.stderr.slice(-2000));
        assertLoaded(srv, stateDir);
        const env = {
          ...baseEnv(home.home),
          ...npmPrefix,
          PI_CODING_AGENT_DIR: home.agentDir,
          SMARTER_COMPACT_STATE_DIR: stateDir,
        };
        const before = await doctor(env, ["--project", home.proj]);
        const ok = assertDoctorOk(before, "pi");
        assert.ok(ok.message.includes(dir), ok.message);
        hostEmbeddings(before, "pi", false);
        // Pi 1.x: npm --prefix <agent dir>/npm; Pi 0.73: npm -g into the same global prefix.
        const out = await enableEmbeddings(
          dir,
          npmEnv(home.home, { ...npmPrefix, PI_CODING_AGENT_DIR: home.agentDir }),
          legacy ? null : path.join(root, "package-lock.json"),
        );
        assert.ok(out.includes(legacy ? `-g --prefix ${prefix}` : `--prefix ${root}`), out);
        hostEmbeddings(await doctor(env, ["--project", home.proj]), "pi", true);
        await assertHybridInHost(srv, () =>
          runPi({
            home,
            legacy,
            discover: true,
            prompt: "search",
            env: { ...npmPrefix, SMARTER_COMPACT_STATE_DIR: stateDir },
            timeoutMs: 180_000,
          }),
        );
      } finally {
        await srv.close();
        cleanup(home);
      }
    },
  );
}
