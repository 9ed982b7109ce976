// The session report: a self-contained HTML page for a real session, rendered by headless
// Chromium (Debian's `chromium`, installed by `make test`) into a screenshot.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createCompactor } from "../../npm/js/index.js";
import { loadSession, replay } from "../../npm/js/sessions.js";
import { scratchDir } from "./helpers/scratch.mjs";

const CLI = fileURLToPath(new URL("../../npm/js/cli.js", import.meta.url));

test("report renders a real session's timeline and tables in Chromium", async () => {
  const dir = scratchDir("sc-report-");
  const { history } = loadSession(
    fileURLToPath(new URL("../../data/demo-session.json", import.meta.url)),
  );
  const c = await createCompactor({
    sessionId: "demo",
    stateDir: dir,
    config: { trimAtTokens: 16000 },
    embedder: false,
  });
  let trims = 0;
  for await (const { stats } of replay(c, history)) trims += stats.trimmed ? 1 : 0;
  await c.close();
  const html = join(dir, "report.html");
  const said = execFileSync(
    process.execPath,
    [CLI, "report", "demo", "--state-dir", dir, "--html", html],
    { encoding: "utf8" },
  );
  assert.match(said, /wrote /);
  const page = readFileSync(html, "utf8");
  assert.equal((page.match(/<polyline /g) ?? []).length, 2, "received and sent lines");
  assert.equal(
    (page.match(/stroke-dasharray="4 3"\/>/g) ?? []).length,
    trims + 1,
    "one marker per trim, plus the legend's",
  );
  assert.match(page, /1 outputs compressed/);
  assert.ok(
    !/<script|src="http|href="http/.test(page),
    "self-contained: no scripts, nothing fetched",
  );
  const shot = join(dir, "report.png");
  execFileSync(
    "chromium",
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${join(dir, "chrome")}`,
      "--window-size=1100,900",
      `--screenshot=${shot}`,
      `file://${html}`,
    ],
    { stdio: "ignore", timeout: 60_000 },
  );
  const png = readFileSync(shot);
  assert.equal(png.subarray(1, 4).toString(), "PNG");
  assert.ok(
    statSync(shot).size > 30_000,
    `a blank page would be tiny: ${statSync(shot).size} bytes`,
  );
  const text = execFileSync(process.execPath, [CLI, "report", "demo", "--state-dir", dir], {
    encoding: "utf8",
  });
  assert.match(text, /72 requests, 2 trims, 1 compressed outputs/);
});
