// `smarter-compact report <session> [--html FILE]`.
import { existsSync, writeFileSync } from "node:fs";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
import { sessionPath } from "../index.js";
import { reportData, reportHtml } from "../report.js";

export async function reportCommand({ session, html, stateDir }, out) {
  const path = sessionPath(resolveStateDir(stateDir), session);
  if (!existsSync(path))
    throw codedError("E_NO_SESSION", `no session ${JSON.stringify(session)} (${path})`);
  const data = await reportData(path);
  if (!html) {
    const sum = (key) => data.requests.reduce((a, r) => a + r[key], 0);
    out(
      `session ${session}: ${data.requests.length} requests, ${data.trims.length} trims, ${data.blobs.length} compressed outputs, ${data.trimmed.length} messages trimmed; tokens ${sum("after")} sent of ${sum("before")} received. Use --html FILE for the picture.`,
    );
    return 0;
  }
  writeFileSync(html, reportHtml(session, data));
  out(`wrote ${html}`);
  return 0;
}
