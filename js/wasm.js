// Loads the engine's WebAssembly module. The compiled module is cached; an instance that
// trapped is thrown away and the next call gets a fresh one (the glue is re-imported under a
// new URL, which gives it a fresh module scope).
import { readFileSync } from "node:fs";

const glueUrl = new URL("../pkg/smarter_compact.js", import.meta.url);
const wasmUrl = new URL("../pkg/smarter_compact_bg.wasm", import.meta.url);
let compiled = null;
let current = null;
let generation = 0;
const rawExports = new WeakMap();

/** The engine bindings of a live instance. */
export async function engineModule() {
  if (current) return current;
  compiled ??= new WebAssembly.Module(readFileSync(wasmUrl));
  const glue = await import(`${glueUrl.href}?instance=${generation++}`);
  rawExports.set(glue, glue.initSync({ module: compiled }));
  current = glue;
  return current;
}

/** The raw exports (memory included) of an instance, for diagnostics and fault tests. */
export function instanceExports(glue) {
  return rawExports.get(glue);
}

/** Forgets the current instance (after a trap); the next `engineModule()` makes a new one. */
export function discardInstance(glue) {
  if (current === glue) current = null;
}
