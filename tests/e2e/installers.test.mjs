// The package installed the way users install it: `opencode plugin <package>` and
// `pi install <package>` (the registry's `smarter-compact` and `npm:smarter-compact` resolve to the
// same package contents); then one turn in each host shows the plugin loaded from there.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, toolNames } from "./lib/scripted-server.mjs";
import { runHostCli, runOpenCode, runPi, setupOpenCodeHome, setupPiHome } from "./lib/hosts.mjs";
import { installedPackage } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

const FIVE = [
  "smart_compact_search",
  "smart_compact_sql",
  "smart_compact_get",
  "compact_context",
  "context_status",
];

function sessions(stateDir) {
  const dir = path.join(stateDir, "context", "sessions");
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".db")) : [];
}

test(
  "opencode plugin <package> installs it; OpenCode then loads it",
  { timeout: 180_000 },
  async () => {
    const pkg = installedPackage();
    const srv = await startServer({
      script: [{ tool: "bash", args: { command: "echo hi" } }, { text: "done" }],
    });
    try {
      const home = setupOpenCodeHome({ server: srv });
      const r = await runHostCli(home, ["plugin", "-g", pkg.dir]);
      assert.equal(r.code, 0, r.stderr);
      const cfg = JSON.parse(fs.readFileSync(path.join(home.configDir, "opencode.json"), "utf8"));
      assert.ok(cfg.plugin.includes(pkg.dir), JSON.stringify(cfg.plugin));
      const stateDir = scratchDir("sc-inst-oc-");
      const run = await runOpenCode({
        home,
        prompt: "run echo hi",
        env: { SMARTER_COMPACT_STATE_DIR: stateDir },
      });
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      for (const name of FIVE)
        assert.ok(toolNames(srv.agentRequests()[0].body).includes(name), name);
      assert.equal(sessions(stateDir).length, 1, "the plugin stored the session");
    } finally {
      await srv.close();
    }
  },
);

test(
  "pi install <package> installs it; Pi then loads it from the package manifest",
  { timeout: 180_000 },
  async () => {
    const pkg = installedPackage();
    const srv = await startServer({
      script: [{ tool: "bash", args: { command: "echo hi" } }, { text: "done" }],
    });
    try {
      const home = setupPiHome({ server: srv });
      const r = await runHostCli(home, ["install", pkg.dir]);
      assert.equal(r.code, 0, r.stderr);
      const stateDir = scratchDir("sc-inst-pi-");
      const run = await runPi({
        home,
        discover: true,
        prompt: "run echo hi",
        env: { SMARTER_COMPACT_STATE_DIR: stateDir },
      });
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      for (const name of FIVE)
        assert.ok(toolNames(srv.agentRequests()[0].body).includes(name), name);
      assert.equal(sessions(stateDir).length, 1, "the extension stored the session");
    } finally {
      await srv.close();
    }
  },
);
