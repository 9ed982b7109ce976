// A live writer for the read-only tests, run in its own process under Node 22 (node:sqlite) or
// Bun (bun:sqlite): it replays a real session into a store through the real compactor (WAL
// mode, as in OpenCode and Pi), then keeps its connection open, so the store's `-wal` file holds
// the session, and prints one line `ready <json>` with what it wrote. It closes the store and
// exits when its stdin ends (or says "close"), printing `closed`.
//
// usage: <runtime> wal-writer.mjs <state dir> <session id> <backend> <session file>
import { createCompactor } from "../../../npm/js/index.js";
import { loadSession, replay } from "../../../npm/js/sessions.js";

const [stateDir, sessionId, backend, file] = process.argv.slice(2);
const c = await createCompactor({
  sessionId,
  stateDir,
  sqlite: backend,
  embedder: false,
  config: { trimAtTokens: 8000 },
});
const { history } = loadSession(file);
for await (const step of replay(c, history)) {
  if (step.stats.fail_open)
    throw new Error(`the writer failed open: ${JSON.stringify(step.stats.error)}`);
}
const s = await c.status();
process.stdout.write(
  `ready ${JSON.stringify({ backend: s.store.backend, messages: s.messages, trims: s.trims, requests: s.usage.requests, blobs: s.stored.blobs })}\n`,
);

let closing = false;
const finish = async () => {
  if (closing) return;
  closing = true;
  await c.close();
  process.stdout.write("closed\n");
  process.exit(0);
};
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => {
  if (d.includes("close")) finish();
});
process.stdin.on("end", finish);
