// A separate process for the fault tests. usage: fault-worker.mjs <mode> <stateDir> <session.json> [args]
//   replay <from> <to>   replay requests [from, to) of the session; prints one JSON line per request
//   flushing             replay with sql.js, flushing after every request and printing how many
//                        messages each flush contained (the parent kills it mid-way)
import { createCompactor, openSqlite, sessionPath } from "../../../npm/js/index.js";
import { loadSession, requests } from "../../../npm/js/sessions.js";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

const [mode, stateDir, file, a, b] = process.argv.slice(2);
const reqs = requests(loadSession(file).history);
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

if (mode === "replay") {
  const c = await createCompactor({
    sessionId: "shared",
    stateDir,
    config: { trimAtTokens: 8000 },
    embedder: false,
  });
  for (const r of reqs.slice(Number(a), Number(b))) {
    const { stats } = await c.transform(r, { format: "openai" });
    say({ failOpen: stats.fail_open, code: stats.error?.code ?? null, trimmed: stats.trimmed });
  }
  await c.close();
} else if (mode === "flushing") {
  const path = sessionPath(stateDir, "killed");
  mkdirSync(dirname(path), { recursive: true });
  const shim = await openSqlite({ path, backend: "sql.js" });
  const c = await createCompactor({
    sessionId: "killed",
    stateDir,
    sqlite: shim,
    config: { trimAtTokens: 8000 },
    embedder: false,
  });
  for (const r of reqs) {
    await c.transform(r, { format: "openai" });
    shim.flush();
    say({ flushed: shim.query("SELECT count(*) FROM messages", [])[0][0] });
  }
}
