// `smarter-compact demo`: replays a real session through the engine with a small threshold and
// prints what each request looked like before and after.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCompactor } from "./index.js";
import { loadSession, replay } from "./sessions.js";

const DEMO_SESSION = fileURLToPath(new URL("../data/demo-session.json", import.meta.url));

const k = (n) => (n >= 1_000 ? `${(n / 1000).toFixed(1)}k` : String(n));
const pad = (s, w) => String(s).padStart(w);

/** Runs the demo and prints the table; returns the totals. */
export async function runDemo({ file = DEMO_SESSION, trimAt = 16_000, out = console.log } = {}) {
  const { id, history } = loadSession(file);
  const stateDir = mkdtempSync(join(tmpdir(), "smarter-compact-demo-"));
  const c = await createCompactor({
    sessionId: "demo",
    stateDir,
    config: { trimAtTokens: trimAt },
  });
  out(`smarter-compact demo: ${id}, ${history.length} messages, trim_at ${trimAt} tokens`);
  out(
    `${pad("req", 4)} ${pad("msgs in→out", 12)} ${pad("tokens before→after", 20)}  ${"event".padEnd(24)} prefix`,
  );
  const t = {
    requests: 0,
    trims: 0,
    compressed: 0,
    reused: 0,
    reusable: 0,
    before: 0,
    after: 0,
    failOpen: 0,
    over: 0,
  };
  let n = 0;
  for await (const { request, messages, stats } of replay(c, history)) {
    n++;
    t.requests++;
    t.before += stats.before_tokens ?? 0;
    t.after += stats.after_tokens ?? 0;
    t.trims += stats.trimmed ? 1 : 0;
    t.compressed += stats.compressed;
    t.failOpen += stats.fail_open ? 1 : 0;
    t.over += stats.over_limit ? 1 : 0;
    const events = [];
    if (stats.trimmed) events.push(`TRIM (−${stats.removed_messages} msgs)`);
    if (stats.compressed) events.push(`compressed ${stats.compressed}`);
    if (stats.over_limit) events.push("over: minimum");
    if (stats.fail_open) events.push(`FAIL-OPEN ${stats.error?.code}`);
    let prefix = "—";
    if (n > 1 && !stats.trimmed) {
      t.reusable++;
      t.reused += stats.prefix_reused ? 1 : 0;
      prefix = stats.prefix_reused ? "reused" : "CHANGED";
    } else if (stats.trimmed) prefix = "new";
    const flow = `${k(stats.before_tokens ?? 0)} → ${k(stats.after_tokens ?? 0)}`;
    out(
      `${pad(n, 4)} ${pad(`${request.length} → ${messages.length}`, 12)} ${pad(flow, 20)}  ${events.join(", ").padEnd(24)} ${prefix}`,
    );
  }
  await c.close();
  rmSync(stateDir, { recursive: true, force: true });
  const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : "n/a");
  out("");
  out(
    `requests ${t.requests}, trims ${t.trims}, tool results compressed ${t.compressed}, fail-opens ${t.failOpen}, over the limit (minimum) ${t.over}`,
  );
  out(
    `tokens sent ${k(t.after)} of ${k(t.before)} received (${pct(t.before - t.after, t.before)} less); prefix reused between trims ${t.reused}/${t.reusable} (${pct(t.reused, t.reusable)})`,
  );
  return t;
}
