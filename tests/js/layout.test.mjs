// The package's module graph: no import cycles (a cycle makes load order decide which binding is
// still undefined), and the proxy does not depend on a host plugin.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const JS = fileURLToPath(new URL("../../js/", import.meta.url));

/** Every .js file under js/, with the relative modules it imports or re-exports. */
function graph() {
  const files = readdirSync(JS, { recursive: true })
    .filter((f) => f.endsWith(".js"))
    .map((f) => join(JS, f));
  const edges = new Map();
  for (const f of files) {
    const src = readFileSync(f, "utf8");
    const deps = [
      ...src.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms),
    ].map((m) => resolve(dirname(f), m[1]));
    edges.set(f, deps);
  }
  return edges;
}

test("js/ has no import cycle", () => {
  const edges = graph();
  assert.ok(edges.size > 20, `${edges.size} modules found`);
  const state = new Map(); // 1: on the current path, 2: done
  const cycles = [];
  const visit = (f, path) => {
    if (state.get(f) === 2) return;
    if (state.get(f) === 1) {
      cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(JS, p)).join(" → "));
      return;
    }
    state.set(f, 1);
    for (const d of edges.get(f) ?? []) visit(d, [...path, f]);
    state.set(f, 2);
  };
  for (const f of edges.keys()) visit(f, []);
  assert.deepEqual(cycles, []);
});

test("the proxy does not import a host plugin", () => {
  const edges = graph();
  for (const [f, deps] of edges) {
    if (!relative(JS, f).startsWith("proxy")) continue;
    for (const d of deps)
      assert.ok(
        !relative(JS, d).startsWith("hosts"),
        `${relative(JS, f)} imports ${relative(JS, d)}`,
      );
  }
});

test("the engine wasm has no TOML editor; the CLI's edit build has only that", () => {
  const wasm = (dir) =>
    readFileSync(
      fileURLToPath(new URL(`../../npm/${dir}/smarter_compact_bg.wasm`, import.meta.url)),
    );
  const exportsOf = (bytes) =>
    WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name);
  const engine = exportsOf(wasm("pkg"));
  const edit = exportsOf(wasm("pkg-edit"));
  for (const name of ["setTrimAt", "tomlSet", "tomlRemove"]) {
    assert.ok(!engine.includes(name), `the engine exports ${name}`);
    assert.ok(edit.includes(name), `the edit build lacks ${name}`);
  }
  for (const name of ["resolveConfig", "engine_new", "engine_transform"]) {
    assert.ok(engine.includes(name), `the engine lacks ${name}`);
    assert.ok(!edit.includes(name), `the edit build exports ${name}`);
  }
  // The engine keeps its name section: no function of toml_edit was linked in.
  assert.ok(wasm("pkg").includes("compact_context"), "the engine's name section is there");
  assert.ok(!wasm("pkg").includes("toml_edit"), "toml_edit code in the engine wasm");
});
