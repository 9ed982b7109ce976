// The two packed tarballs as a user installs them, under Node 20, Node 22 and Bun, through every
// entry point of the core's package.json: smarter-compact alone (≤ 1.5 MB packed; the hook trims,
// search answers from full-text, `status` says there is no embedder) and smarter-compact with
// smarter-compact-embed beside it (hybrid search and compact_context with embeddings).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { E2E_DIR, hostPaths } from "./lib/hosts.mjs";
import { installedPackage, packedTarball } from "./lib/package.mjs";
import { scratchDir } from "../js/helpers/scratch.mjs";

/** The core's packed size limit (npm's MB, as `npm pack` prints it). */
const CORE_LIMIT = 1_500_000;

const CHECK = `
import { createCompactor, compactContext, createEmbedder, version, toolDefinitions } from "smarter-compact";
import plugin from "smarter-compact";
import opencode from "smarter-compact/opencode";
import pi from "smarter-compact/pi";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
// A fresh state directory inside the consumer project, which the test removes with it.
const stateDir = mkdtempSync(join(process.cwd(), "state-"));
const c = await createCompactor({ sessionId: "pack", stateDir, config: { trimAtTokens: 1000 } });
const msgs = [{ role: "user", content: "hello" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c1", content: "x ".repeat(9000) }];
for (let i = 0; i < 12; i++) {
  msgs.push({ role: "user", content: "step " + i + ": look at module_" + i + " " + "word ".repeat(60) });
  msgs.push({ role: "assistant", content: "module_" + i + " done; the record zebra_" + i + " changed " + "text ".repeat(60) });
}
const { messages, stats } = await c.transform(msgs, { format: "openai", model: "m" });
const fts = await c.search("zebra_7", { scope: "all", mode: "fts" });
const auto = await c.search("zebra_7", { scope: "all" });
let hybrid;
try {
  const h = await c.search("which record changed after the module was done", { scope: "all", mode: "hybrid" });
  hybrid = { mode: h.mode, hits: h.hits.length };
} catch (e) {
  hybrid = { error: e.code };
}
let embedder;
try {
  const e = await createEmbedder();
  embedder = { dim: e.info.dim, modelDir: e.info.modelDir };
  await e.close();
} catch (e) {
  embedder = { error: e.code, message: e.message };
}
const status = await c.status();
await c.close();
const cc = await compactContext({ messages: msgs.slice(3, 11), query: "zebra_4", target_ratio: 0.5 });
console.log(JSON.stringify({
  version: await version(), plugin: plugin === opencode && typeof opencode.server === "function" && opencode.id, pi: typeof pi,
  tools: (await toolDefinitions()).map((t) => t.name).length, failOpen: stats.fail_open, compressed: stats.compressed,
  trimmed: stats.trimmed, sent: messages.length, received: msgs.length,
  fts: { mode: fts.mode, top: fts.hits[0]?.snippet ?? "" },
  auto: { mode: auto.mode, top: auto.hits[0]?.snippet ?? "" }, hybrid, embedder,
  backend: status.store.backend, embedding: cc.stats.embedding,
}));
`;

/** Runtimes: name → binary (each runs the check file and the CLI). */
function runtimes() {
  return {
    "Node 20": process.execPath,
    "Node 22": hostPaths().node22,
    Bun: path.join(E2E_DIR, "..", "..", "node_modules", ".bin", "bun"), // the repository's dev dependency
  };
}

/** An environment that finds no embedder of this machine's user: a scratch HOME and npm prefix,
 * none of the package's variables. */
function isolatedEnv() {
  const home = scratchDir("sc-pack-home-");
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(CONTEXT_|SMARTER_COMPACT_|XDG_|PI_CODING_AGENT_DIR$|npm_config_prefix$)/i.test(k))
      env[k] = v;
  return { ...env, HOME: home, npm_config_prefix: path.join(home, "npm-global") };
}

/** Runs the check and `smarter-compact status` under each runtime: name → `{ out, status }`. */
function runEverywhere(pkg) {
  const file = path.join(pkg.project, "check.mjs");
  fs.writeFileSync(file, CHECK);
  const env = isolatedEnv();
  const cli = path.join(pkg.dir, "js", "cli.js");
  const results = {};
  for (const [name, bin] of Object.entries(runtimes())) {
    const run = (args) =>
      execFileSync(bin, args, { cwd: pkg.project, encoding: "utf8", env, timeout: 180_000 });
    const out = JSON.parse(run([file]).trim().split("\n").at(-1));
    const status = run([cli, "status", "--state-dir", path.join(pkg.project, "no-state")]);
    results[name] = { out, status };
  }
  return results;
}

/** What both installs share: the entry points, the hook, the store backend of each runtime. */
function assertCommon(results) {
  for (const [name, { out }] of Object.entries(results)) {
    assert.match(out.version, /^\d+\.\d+\.\d+$/, name);
    assert.equal(out.plugin, "smarter-compact", `${name}: default export is the OpenCode plugin`);
    assert.equal(out.pi, "function", `${name}: the Pi extension`);
    assert.equal(out.tools, 5, name);
    assert.equal(out.failOpen, false, name);
    assert.equal(out.compressed, 1, name);
    assert.equal(out.trimmed, true, `${name}: the hook trimmed`);
    assert.ok(out.sent < out.received, `${name}: ${out.sent} of ${out.received} messages sent`);
    assert.equal(out.fts.mode, "fts", name);
    assert.match(out.fts.top, /zebra_7/, `${name}: full-text search finds the exact record`);
  }
  assert.equal(results["Node 22"].out.backend, "node:sqlite");
  assert.equal(results.Bun.out.backend, "bun:sqlite");
  assert.ok(["better-sqlite3", "sql.js"].includes(results["Node 20"].out.backend));
}

test("npm pack: the core ≤ 1.5 MB packed without embedder or model; the embedder package has them; one version", () => {
  const core = packedTarball("core");
  const embed = packedTarball("embed");
  const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
  for (const p of [core, embed])
    console.log(
      `npm pack ${p.name}@${p.version}: ${mb(p.size)} packed, ${mb(p.unpackedSize)} unpacked, ${p.files.length} files`,
    );
  assert.equal(core.name, "smarter-compact");
  assert.equal(embed.name, "smarter-compact-embed");
  assert.equal(embed.version, core.version, "both packages carry one version");
  assert.ok(
    core.size <= CORE_LIMIT,
    `the core is ${mb(core.size)} packed (limit ${mb(CORE_LIMIT)})`,
  );
  assert.ok(
    !core.files.some((f) => /^(models|pkg-embed|src)\//.test(f)),
    `no model, embedder or Rust sources in the core: ${core.files.join(", ")}`,
  );
  for (const f of [
    "pkg/smarter_compact_bg.wasm",
    "pkg-edit/smarter_compact_bg.wasm",
    "js/embedder-package.js",
  ])
    assert.ok(core.files.includes(f), `${f} is in the core`);
  for (const f of [
    "index.js",
    "models/minilm-l6-v2-int8.onnx",
    "models/tokenizer.json",
    "pkg-embed/smarter_compact_bg.wasm",
    "pkg-embed/smarter_compact.js",
  ])
    assert.ok(embed.files.includes(f), `${f} is in the embedder package`);
});

test(
  "the core alone under Node 20, Node 22 and Bun: trims, searches full-text, says there is no embedder",
  { timeout: 300_000 },
  () => {
    const pkg = installedPackage();
    assert.ok(!fs.existsSync(path.join(pkg.project, "node_modules", "smarter-compact-embed")));
    const results = runEverywhere(pkg);
    assertCommon(results);
    for (const [name, { out, status }] of Object.entries(results)) {
      assert.equal(out.auto.mode, "fts", `${name}: the default search is full-text`);
      assert.match(out.auto.top, /zebra_7/, name);
      assert.deepEqual(out.hybrid, { error: "E_NO_MODEL" }, name);
      assert.equal(out.embedder.error, "E_NO_MODEL", name);
      assert.match(out.embedder.message, /smarter-compact-embed not installed/, name);
      assert.equal(out.embedding, false, `${name}: compact_context without embeddings`);
      assert.match(
        status,
        /^embeddings: off — smarter-compact-embed not installed; `smarter-compact enable embeddings` adds it; full-text search only$/m,
        `${name}: ${status}`,
      );
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(pkg.dir, "package.json"), "utf8"));
    assert.deepEqual(manifest.pi.extensions, ["./js/hosts/pi.js"]);
    for (const d of ["src", "models", "pkg-embed"])
      assert.ok(!fs.readdirSync(pkg.dir).includes(d), `no ${d} in the installed core`);
  },
);

test(
  "core and embedder side by side under Node 20, Node 22 and Bun: hybrid search, compact_context with embeddings",
  { timeout: 300_000 },
  () => {
    const pkg = installedPackage({ embed: true });
    const results = runEverywhere(pkg);
    assertCommon(results);
    const model = path.join(pkg.embedDir, "models");
    for (const [name, { out, status }] of Object.entries(results)) {
      assert.equal(out.hybrid.mode, "hybrid", `${name}: ${JSON.stringify(out.hybrid)}`);
      assert.ok(out.hybrid.hits > 0, name);
      assert.equal(out.embedder.dim, 384, `${name}: ${JSON.stringify(out.embedder)}`);
      assert.equal(fs.realpathSync(out.embedder.modelDir), fs.realpathSync(model), name);
      assert.equal(out.embedding, true, `${name}: compact_context with embeddings`);
      assert.match(
        status,
        /^embeddings: on — smarter-compact-embed \d+\.\d+\.\d+ at .*node_modules\/smarter-compact-embed \(beside smarter-compact\), model .*minilm-l6-v2-int8\.onnx$/m,
        `${name}: ${status}`,
      );
    }
  },
);
