// Errors with a stable `code`, whether they come from the engine or from this side.

/** Builds an `Error` named SmarterCompactError with a stable `code`. */
export function codedError(code, message, cause) {
  const e = new Error(message, cause === undefined ? undefined : { cause });
  e.name = "SmarterCompactError";
  e.code = code;
  return e;
}

/** The engine's own errors carry a code; anything else (a trap, a bug) is E_INTERNAL. */
export function asCoded(e) {
  if (e && typeof e === "object" && typeof e.code === "string" && e.code.startsWith("E_")) return e;
  const message = e instanceof Error ? e.message : String(e);
  return codedError("E_INTERNAL", `internal error: ${message}`, e);
}

/** True for errors after which the wasm instance can no longer be trusted: a real trap (a panic
 * aborts as one). A JS error on this side leaves the instance as it was. */
export function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError;
}
