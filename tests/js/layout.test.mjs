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
  const files = readdirSync(JS, { recursive: true }).filter((f) => f.endsWith(".js")).map((f) => join(JS, f));
  const edges = new Map();
  for (const f of files) {
    const src = readFileSync(f, "utf8");
    const deps = [...src.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)].map((m) => resolve(dirname(f), m[1]));
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
    for (const d of deps) assert.ok(!relative(JS, d).startsWith("hosts"), `${relative(JS, f)} imports ${relative(JS, d)}`);
  }
});
