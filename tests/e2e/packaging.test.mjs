// The packed tarball installed into an empty project imports and works under Node 20, Node 22
// and Bun, through every entry point of its package.json, with its embedding model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { E2E_DIR, hostPaths } from "./lib/hosts.mjs";
import { installedPackage } from "./lib/package.mjs";

const CHECK = `
import { createCompactor, compactContext, version, toolDefinitions } from "smarter-compact";
import plugin from "smarter-compact";
import opencode from "smarter-compact/opencode";
import pi from "smarter-compact/pi";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
// A fresh state directory inside the consumer project, which the test removes with it.
const c = await createCompactor({ sessionId: "pack", stateDir: mkdtempSync(join(process.cwd(), "state-")) });
const msgs = [{ role: "user", content: "hello" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c1", content: "x ".repeat(9000) }];
const { stats } = await c.transform(msgs, { format: "openai" });
const status = await c.status();
const cc = await compactContext({ messages: [{ role: "user", content: "a b c" }], target_ratio: 0.5 });
console.log(JSON.stringify({
  version: await version(), plugin: plugin === opencode && typeof opencode.server === "function" && opencode.id, pi: typeof pi,
  tools: (await toolDefinitions()).map((t) => t.name).length, failOpen: stats.fail_open, compressed: stats.compressed,
  backend: status.store.backend, embedding: cc.stats.embedding,
}));
`;

test("the tarball imports and runs under Node 20, Node 22 and Bun", { timeout: 240_000 }, () => {
  const pkg = installedPackage();
  const file = path.join(pkg.project, "check.mjs");
  fs.writeFileSync(file, CHECK);
  const bun = path.join(E2E_DIR, "..", "..", "node_modules", ".bin", "bun"); // the repository's dev dependency
  const runtimes = {
    "Node 20": [process.execPath, [file]],
    "Node 22": [hostPaths().node22, [file]],
    Bun: [bun, [file]],
  };
  const backends = {};
  for (const [name, [bin, args]] of Object.entries(runtimes)) {
    const out = JSON.parse(
      execFileSync(bin, args, { cwd: pkg.project, encoding: "utf8" }).trim().split("\n").at(-1),
    );
    assert.match(out.version, /^\d+\.\d+\.\d+$/, name);
    assert.equal(out.plugin, "smarter-compact", `${name}: default export is the OpenCode plugin`);
    assert.equal(out.pi, "function", `${name}: the Pi extension`);
    assert.equal(out.tools, 5, name);
    assert.equal(out.failOpen, false, name);
    assert.equal(out.compressed, 1, name);
    assert.equal(out.embedding, true, `${name}: the packaged model and embedder load`);
    backends[name] = out.backend;
  }
  assert.equal(backends["Node 22"], "node:sqlite");
  assert.equal(backends.Bun, "bun:sqlite");
  assert.ok(["better-sqlite3", "sql.js"].includes(backends["Node 20"]));
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg.dir, "package.json"), "utf8"));
  assert.deepEqual(manifest.pi.extensions, ["./js/hosts/pi.js"]);
  assert.ok(!fs.readdirSync(pkg.dir).includes("src"), "no Rust sources in the package");
  for (const f of [
    "models/minilm-l6-v2-int8.onnx",
    "models/tokenizer.json",
    "pkg-embed/smarter_compact_bg.wasm",
    "pkg-edit/smarter_compact_bg.wasm",
  ]) {
    assert.ok(fs.existsSync(path.join(pkg.dir, f)), `${f} is in the package`);
  }
});
