// Scratch directories for tests: created under the system's temporary directory and removed when
// the test process exits (whatever the outcome), so a run leaves nothing behind in /tmp.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = [];
process.on("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory `<tmp>/<prefix>XXXXXX` (or under `base`), removed at process exit. */
export function scratchDir(prefix, base = tmpdir()) {
  const dir = mkdtempSync(join(base, prefix));
  made.push(dir);
  return dir;
}
