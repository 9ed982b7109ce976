// `smarter-compact doctor` on prepared homes: every host location (HOME, XDG dirs, Pi's agent
// dir, Claude's and Codex's dirs, the state dir, the project) points into a scratch dir, and
// SMARTER_COMPACT_DOCTOR_PATH="" makes doctor look for no host binary, so only what a test
// writes is found. Checked: the JSON report, the exit code, and that stores are never written.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import {
  cpSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createCompactor } from "../../npm/js/index.js";
import { CLI, cleanEnv, run, tempDir } from "./helpers/cli.mjs";

/** A scratch home: its env, its paths, and `doctor(...args)` run in it. */
function home() {
  const dir = tempDir("sc-doctor-");
  const p = {
    dir,
    config: join(dir, ".config"),
    opencodeDir: join(dir, ".config", "opencode"),
    cache: join(dir, ".cache"),
    piDir: join(dir, ".pi", "agent"),
    state: join(dir, "state"),
    project: join(dir, "project"),
  };
  p.opencodeFile = join(p.opencodeDir, "opencode.json");
  p.piFile = join(p.piDir, "settings.json");
  p.sessions = join(p.state, "context", "sessions");
  mkdirSync(join(p.project, ".git"), { recursive: true }); // the project's search stops here
  p.env = {
    HOME: dir,
    XDG_CONFIG_HOME: p.config,
    XDG_CACHE_HOME: p.cache,
    PI_CODING_AGENT_DIR: p.piDir,
    SMARTER_COMPACT_STATE_DIR: p.state,
    SMARTER_COMPACT_DOCTOR_PATH: "",
    CLAUDE_CONFIG_DIR: join(dir, ".claude"),
    CODEX_HOME: join(dir, ".codex"),
    OPENCODE_CONFIG: "",
    OPENCODE_CONFIG_DIR: "",
    CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: "",
    npm_config_prefix: join(dir, "npm-global"),
  };
  p.cli = (...args) => run(args, { env: p.env });
  p.doctor = (...args) => {
    const r = run(["doctor", "--json", "--project", p.project, ...args], { env: p.env });
    assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
    return { ...r, report: JSON.parse(r.stdout) };
  };
  return p;
}

const fails = (report) => report.findings.filter((f) => f.status === "fail");
const write = (file, text) => {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
};

/** A healthy store with a few requests in it. */
async function makeStore(stateDir, sessionId) {
  const c = await createCompactor({ sessionId, stateDir });
  for (let i = 0; i < 3; i++)
    await c.transform(
      [
        { role: "user", content: `question ${i}: how does the parser handle unicode?` },
        { role: "assistant", content: `answer ${i}` },
      ],
      { model: "gpt-4o" },
    );
  await c.close();
  return join(stateDir, "context", "sessions", `${sessionId}.db`);
}

test("clean home: OpenCode and Pi registered, a healthy store → ok, exit 0", async () => {
  const h = home();
  assert.equal(h.cli("enable", "opencode").code, 0);
  assert.equal(h.cli("enable", "pi").code, 0);
  await makeStore(h.state, "s1");
  const { code, report } = h.doctor();
  assert.equal(code, 0, JSON.stringify(fails(report)));
  assert.equal(report.ok, true);
  assert.deepEqual(fails(report), []);
  const { opencode, pi, claude, codex } = report.hosts;
  assert.deepEqual(opencode, {
    found: true,
    registered: true,
    via: "path",
    config_file: h.opencodeFile,
    installed: true,
    backend: "bun:sqlite",
  });
  assert.equal(pi.found, true);
  assert.equal(pi.registered, true);
  assert.equal(pi.via, "path");
  assert.equal(pi.config_file, h.piFile);
  assert.equal(pi.installed, true);
  assert.ok(["node:sqlite", "better-sqlite3", "sql.js"].includes(pi.backend), pi.backend);
  assert.equal(claude.found, false);
  assert.equal(codex.found, false);
  assert.equal(report.stores.length, 1);
  const [store] = report.stores;
  assert.equal(store.session, "s1");
  assert.equal(store.ok, true);
  assert.equal(store.error, null);
  assert.equal(store.bytes, statSync(join(h.sessions, "s1.db")).size);
  const def = report.thresholds.find((t) => t.pattern === "default");
  assert.equal(def.origin, "built-in");
  assert.equal(typeof def.value, "number");
  for (const f of report.findings) {
    assert.ok(["ok", "warn", "fail"].includes(f.status));
    assert.equal(typeof f.check, "string");
    assert.equal(typeof f.message, "string");
  }
});

test("OpenCode config without our entry: a fail pointing at `enable opencode`, exit 1", () => {
  const h = home();
  write(h.opencodeFile, '{\n  "$schema": "https://opencode.ai/config.json",\n  "plugin": []\n}\n');
  const { code, report } = h.doctor();
  assert.equal(code, 1);
  assert.equal(report.ok, false);
  assert.equal(report.hosts.opencode.found, true);
  assert.equal(report.hosts.opencode.registered, false);
  assert.equal(report.hosts.opencode.via, null);
  const f = fails(report).find((x) => x.host === "opencode" && x.check === "registered");
  assert.ok(f, JSON.stringify(report.findings));
  assert.match(f.message, /not registered/);
  assert.match(f.fix, /smarter-compact enable opencode/);
  assert.equal(report.hosts.pi.found, false); // no Pi dir: not found, not a failure
  assert.ok(!report.findings.some((x) => x.host === "pi"));
});

test('npm entry "smarter-compact" that OpenCode never installed: a fail with a fix; installed, it is fine', () => {
  const h = home();
  write(h.opencodeFile, '{ "plugin": ["smarter-compact"] }\n');
  const missing = h.doctor();
  assert.equal(missing.code, 1);
  const oc = missing.report.hosts.opencode;
  assert.equal(oc.registered, true);
  assert.equal(oc.via, "npm");
  assert.equal(oc.installed, false);
  const f = fails(missing.report).find((x) => x.check === "installed");
  assert.ok(f, JSON.stringify(missing.report.findings));
  assert.match(f.message, /no install of it/);
  assert.ok(f.message.includes(join(h.cache, "opencode", "packages", "smarter-compact@latest")));
  assert.match(f.fix, /opencode plugin smarter-compact/);
  assert.match(f.fix, /smarter-compact enable opencode/);
  // Where `opencode plugin smarter-compact` puts it.
  const pkg = join(h.cache, "opencode", "packages", "smarter-compact@latest", "node_modules");
  write(join(pkg, "smarter-compact", "package.json"), '{ "name": "smarter-compact" }\n');
  const there = h.doctor();
  assert.equal(there.code, 0, JSON.stringify(fails(there.report)));
  assert.equal(there.report.hosts.opencode.installed, true);
});

test("a path entry whose file is gone is a fail", () => {
  const h = home();
  const gone = join(h.dir, "old-install", "js", "hosts", "opencode.js");
  write(h.opencodeFile, JSON.stringify({ plugin: [`file://${gone}`] }));
  const { code, report } = h.doctor();
  assert.equal(code, 1);
  assert.equal(report.hosts.opencode.via, "path");
  assert.equal(report.hosts.opencode.installed, false);
  const f = fails(report).find((x) => x.check === "installed");
  assert.ok(f.message.includes(gone));
  assert.match(f.fix, /smarter-compact enable opencode/);
});

test("DCP beside us in OpenCode, pi-vcc beside us in Pi: fails naming the package and the file", () => {
  const h = home();
  assert.equal(h.cli("enable", "opencode").code, 0);
  assert.equal(h.cli("enable", "pi").code, 0);
  const oc = JSON.parse(readFileSync(h.opencodeFile, "utf8"));
  oc.plugin.push("@tarquinen/opencode-dcp@latest");
  write(h.opencodeFile, JSON.stringify(oc, null, 2));
  const pi = JSON.parse(readFileSync(h.piFile, "utf8"));
  pi.packages = ["npm:pi-vcc"];
  write(h.piFile, JSON.stringify(pi, null, 2));
  const { code, report } = h.doctor();
  assert.equal(code, 1);
  const rivals = fails(report).filter((f) => f.check === "rival");
  const dcp = rivals.find((f) => f.host === "opencode");
  assert.ok(
    dcp.message.includes("@tarquinen/opencode-dcp") && dcp.message.includes(h.opencodeFile),
  );
  assert.ok(dcp.fix.includes("@tarquinen/opencode-dcp") && dcp.fix.includes(h.opencodeFile));
  assert.match(dcp.fix, /^remove /);
  const vcc = rivals.find((f) => f.host === "pi");
  assert.ok(vcc.message.includes("pi-vcc") && vcc.fix.includes(h.piFile));
  assert.equal(report.hosts.opencode.registered, true); // ours is still there
});

test("a store of garbage bytes and a truncated store: ok:false with a fix, never written; the healthy one still ok", async () => {
  const h = home();
  await makeStore(h.state, "good");
  const truncated = await makeStore(h.state, "cut");
  truncateSync(truncated, Math.floor(statSync(truncated).size / 3));
  const garbage = join(h.sessions, "x.db");
  const bytes = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 37 + 11) % 256));
  writeFileSync(garbage, bytes);
  const cutBefore = readFileSync(truncated);
  const { code, report } = h.doctor();
  assert.equal(code, 1);
  const by = Object.fromEntries(report.stores.map((s) => [s.session, s]));
  assert.deepEqual(Object.keys(by).sort(), ["cut", "good", "x"]);
  assert.equal(by.good.ok, true);
  for (const bad of [by.x, by.cut]) {
    assert.equal(bad.ok, false);
    assert.equal(typeof bad.error, "string");
    assert.ok(bad.error.length > 0);
    const f = fails(report).find((x) => x.check === "store" && x.message.includes(bad.path));
    assert.ok(f, `no failing finding for ${bad.path}`);
    assert.equal(
      f.fix,
      `mv ${bad.path} ${bad.path}.corrupt   (that session starts a fresh store; nothing else is affected)`,
    );
  }
  assert.equal(by.x.bytes, 8192);
  assert.ok(readFileSync(garbage).equals(bytes), "the garbage store was written");
  assert.ok(readFileSync(truncated).equals(cutBefore), "the truncated store was written");
});

test("Pi reserveTokens so large Pi compacts first: a fail with the settings fix", () => {
  const h = home();
  assert.equal(h.cli("enable", "pi").code, 0);
  const pi = JSON.parse(readFileSync(h.piFile, "utf8"));
  pi.compaction = { reserveTokens: 150000, keepRecentTokens: 20000 };
  write(h.piFile, JSON.stringify(pi, null, 2));
  const { code, report } = h.doctor();
  assert.equal(code, 1);
  const f = fails(report).find((x) => x.host === "pi" && x.check === "compaction");
  assert.ok(f, JSON.stringify(report.findings));
  assert.match(f.message, /reserveTokens = 150,000/);
  assert.ok(f.fix.startsWith(`set "compaction": {"reserveTokens": 16384} in ${h.piFile}`), f.fix);
  assert.match(f.fix, /smarter-compact context set default \d+%/);
  // At the default, nothing fights.
  pi.compaction = { reserveTokens: 16384 };
  write(h.piFile, JSON.stringify(pi, null, 2));
  const fine = h.doctor();
  assert.equal(fine.code, 0, JSON.stringify(fails(fine.report)));
});

test("OpenCode compaction.reserved so large OpenCode compacts first: a fail with the fix", () => {
  const h = home();
  assert.equal(h.cli("enable", "opencode").code, 0);
  const oc = JSON.parse(readFileSync(h.opencodeFile, "utf8"));
  oc.compaction = { auto: true, reserved: 150000 };
  write(h.opencodeFile, JSON.stringify(oc, null, 2));
  const { code, report } = h.doctor();
  assert.equal(code, 1);
  const f = fails(report).find((x) => x.host === "opencode" && x.check === "compaction");
  assert.ok(f, JSON.stringify(report.findings));
  assert.match(f.message, /compaction\.reserved = 150,000/);
  assert.ok(f.fix.includes(`remove "reserved" from "compaction" in ${h.opencodeFile}`), f.fix);
  // Auto-compaction off: nothing can fight.
  oc.compaction = { auto: false, reserved: 150000 };
  write(h.opencodeFile, JSON.stringify(oc, null, 2));
  assert.equal(h.doctor().code, 0);
});

test("a malformed config file is a finding, never a crash", () => {
  const h = home();
  write(h.piFile, '{ "extensions": [ "/x/pi.js", ]');
  const { code, report, stderr } = h.doctor();
  assert.equal(code, 1, stderr);
  const f = fails(report).find((x) => x.host === "pi" && x.check === "config");
  assert.ok(f.message.startsWith(`Pi: cannot read ${h.piFile}: `), f.message);
  assert.ok(f.fix);
});

test("human output: each FAIL line is followed by its fix; usage errors exit 2", async () => {
  const h = home();
  write(h.opencodeFile, '{ "plugin": ["smarter-compact", "@tarquinen/opencode-dcp"] }\n');
  write(join(h.sessions, "x.db"), "not a database at all, just text\n".repeat(100));
  const r = run(["doctor", "--project", h.project], { env: h.env });
  assert.equal(r.code, 1);
  const lines = r.stdout.trimEnd().split("\n");
  const failing = lines.map((l, i) => [l, i]).filter(([l]) => l.startsWith("FAIL"));
  assert.ok(failing.length >= 3, r.stdout); // not installed, DCP, the store
  for (const [, i] of failing) assert.match(lines[i + 1], /^\s+fix: \S/, lines[i]);
  assert.match(r.stdout, /@tarquinen\/opencode-dcp/);
  assert.match(lines.at(-1), /problems? needs? action/);
  assert.equal(run(["doctor", "extra"], { env: h.env }).code, 2);
  assert.equal(run(["doctor", "--bogus"], { env: h.env }).code, 2);
});

test("a store whose -wal sql.js cannot read, where sql.js is the only backend: a warning, not a corrupt store", async () => {
  // What `npx smarter-compact doctor` on Node 20 meets after an OpenCode session (bun:sqlite leaves
  // its WAL unmerged): a copy of the package whose node_modules has sql.js but no better-sqlite3.
  const repo = fileURLToPath(new URL("../../", import.meta.url));
  const pkg = join(tempDir("sc-doctor-pkg-"), "smarter-compact");
  mkdirSync(join(pkg, "node_modules"), { recursive: true });
  cpSync(join(repo, "npm", "package.json"), join(pkg, "package.json"));
  cpSync(join(repo, "npm", "js"), join(pkg, "js"), { recursive: true });
  for (const d of ["pkg", "pkg-edit", "data"]) symlinkSync(join(repo, "npm", d), join(pkg, d));
  for (const m of ["sql.js", "jsonc-parser"])
    symlinkSync(join(repo, "node_modules", m), join(pkg, "node_modules", m));
  const h = home();
  const db = await makeStore(h.state, "s1");
  writeFileSync(`${db}-wal`, "not merged yet");
  const before = readFileSync(db);
  const env = cleanEnv(h.env);
  delete env.SMARTER_COMPACT_SQLITE; // the backend doctor picks by itself
  const r = spawnSync(process.execPath, [join(pkg, "js", "cli.js"), "doctor", "--json"], {
    env: { ...env, NODE_OPTIONS: "" },
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout);
  const store = report.findings.filter((f) => f.check === "store" && f.status !== "ok");
  assert.equal(store.length, 1, JSON.stringify(report.findings));
  assert.equal(store[0].status, "warn");
  assert.match(store[0].message, /E_STORE_WAL/);
  assert.equal(store[0].fix, null, "no advice to move a healthy store away");
  assert.deepEqual(readFileSync(db), before, "the store was not written");
});

test("a proxy port answered by a proxy that cannot prove this install's secret: a fail, not ok", async () => {
  // An impostor (or an older proxy of another install) answers /health as the proxy, without a
  // proof; Claude Code's requests would go through it, so doctor must not call the setup healthy.
  const impostor = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ service: "smarter-compact-proxy", pid: 1, version: "0.0.0" }));
  });
  await new Promise((done) => impostor.listen(0, "127.0.0.1", done));
  const { port } = impostor.address();
  try {
    const h = home();
    write(
      join(h.dir, ".claude", "settings.json"),
      JSON.stringify({ env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` } }),
    );
    write(
      join(h.dir, ".claude", ".claude.json"),
      JSON.stringify({
        mcpServers: { "smarter-compact": { command: process.execPath, args: [CLI, "mcp"] } },
      }),
    );
    // Asynchronous: the impostor answers from this process's event loop.
    const r = await promisify(execFile)(
      process.execPath,
      [CLI, "doctor", "--json", "--project", h.project],
      { env: cleanEnv(h.env), timeout: 120_000 },
    ).catch((e) => e);
    assert.equal(r.code ?? 0, 1, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.ok, false);
    const proxy = report.findings.filter((f) => f.host === "claude" && f.check === "proxy");
    assert.equal(proxy.length, 1, JSON.stringify(report.findings));
    assert.equal(proxy[0].status, "fail");
    assert.match(proxy[0].message, new RegExp(`127\\.0\\.0\\.1:${port}.*cannot prove`));
    assert.match(proxy[0].fix, /proxy stop|another port/);
  } finally {
    impostor.close();
  }
});
