// The CLI's TOML editor (`context set`, `enable|disable codex`): a small wasm build of its own
// (pkg-edit: toml_edit, comments and layout kept), so the engine the hosts load has none.
import { readFileSync } from "node:fs";

const glueUrl = new URL("../../pkg-edit/smarter_compact.js", import.meta.url);
const wasmUrl = new URL("../../pkg-edit/smarter_compact_bg.wasm", import.meta.url);
let loading = null;

/** The bindings `setTrimAt`, `tomlSet` and `tomlRemove` (errors carry a stable `code`). */
export function tomlEditor() {
  loading ??= import(glueUrl.href).then((glue) => {
    glue.initSync({ module: readFileSync(wasmUrl) });
    return glue;
  });
  return loading;
}
