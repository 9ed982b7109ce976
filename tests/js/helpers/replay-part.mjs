// Replays requests [from, to) of a real session in this process and writes the rewritten
// requests as JSON lines; used to test a restart between two processes.
// usage: replay-part.mjs <session.json> <stateDir> <from> <to> <trimAt> <out.jsonl>
import { writeFileSync } from "node:fs";
import { createCompactor } from "../../../npm/js/index.js";
import { loadSession, requests } from "../../../npm/js/sessions.js";

const [file, stateDir, from, to, trimAt, out] = process.argv.slice(2);
const { history } = loadSession(file);
const c = await createCompactor({
  sessionId: "restart",
  stateDir,
  config: { trimAtTokens: Number(trimAt) },
  embedder: false,
});
const lines = [];
for (const req of requests(history).slice(Number(from), Number(to))) {
  const { messages, stats } = await c.transform(req, { format: "openai" });
  if (stats.fail_open) throw new Error(`fail-open: ${stats.error.message}`);
  lines.push(JSON.stringify(messages));
}
await c.close();
writeFileSync(out, lines.join("\n"));
