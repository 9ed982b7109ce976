// `smarter-compact restore <session>`: asks for the session's latest cut to be lifted. The host
// serving the session makes it on its next request (the request then goes out as it would have
// without that cut) and holds automatic trims until the request has grown again.
import { existsSync } from "node:fs";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
import { createCompactor, sessionPath } from "../index.js";
import { sessionsDir } from "./sessions.js";

const k = (n) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));

/** The answer to a restore, for a person: what comes back and the one-time cache write. */
export function restoreText(plan) {
  if (plan.cut == null) return "smarter-compact: nothing to restore: no cut is in force";
  return (
    `smarter-compact: the next request lifts cut #${plan.cut}: ${plan.messages} messages come back; ` +
    `it writes ≈${k(plan.cache_write_tokens)} tokens to the prompt cache once. ` +
    "Automatic trims wait until the request has grown again; /smarter-compact:compact trims now."
  );
}

/** Asks for the restore on an existing session's store (never creates one). */
export async function restoreCommand({ session, stateDir, json }, out) {
  const dir = resolveStateDir(stateDir);
  const c = await createCompactor({ sessionId: session, stateDir: dir, embedder: false }); // E_BAD_ID first
  try {
    if (!existsSync(sessionPath(dir, session)))
      throw codedError(
        "E_NO_SESSION",
        `no session ${JSON.stringify(session)} in ${sessionsDir(dir)}`,
      );
    const plan = await c.restore();
    out(json ? JSON.stringify(plan) : restoreText(plan));
    return 0;
  } finally {
    await c.close();
  }
}
