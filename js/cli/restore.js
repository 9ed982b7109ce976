// `smarter-compact restore <session>`: asks for the session's latest cut to be lifted. The host
// serving the session makes it on its next request (the request then goes out as it would have
// without that cut) and holds automatic trims until the request has grown again.
import { existsSync } from "node:fs";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
import { createCompactor, sessionPath } from "../index.js";
import { sessionsDir } from "./sessions.js";
import { restoreText } from "../restore-text.js";

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
