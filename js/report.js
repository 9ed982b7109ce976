// `smarter-compact report`: a self-contained HTML page showing a session — tokens per request
// before and after, trims, compressions, prefix reuse — and a table of what was trimmed.
import { openSqlite } from "./shims/index.js";

const esc = (s) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
const k = (n) => (n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : String(n));

/** What the page shows, read from the session database (read-only). */
export async function reportData(dbPath) {
  const db = await openSqlite({ path: dbPath, readonly: true });
  try {
    const q = (sql) => db.query(sql, []);
    const requests = q(
      "SELECT id, at_ms, before_tokens, after_tokens, trimmed, compressed, prefix_reused, over_limit, fail_open FROM requests ORDER BY id",
    ).map(([id, at, before, after, trimmed, compressed, reused, over, failOpen]) => ({
      id,
      at,
      before,
      after,
      trimmed: !!trimmed,
      compressed,
      reused: !!reused,
      over: !!over,
      failOpen: !!failOpen,
    }));
    const trims = q(
      "SELECT seq, removed_messages, removed_tokens, manual, created_at FROM trims ORDER BY id",
    ).map(([seq, messages, tokens, manual, at]) => ({
      seq,
      messages,
      tokens,
      manual: !!manual,
      at,
    }));
    const trimmed = q(
      "SELECT seq, role, coalesce(tool_name, ''), tokens, substr(replace(text, char(10), ' '), 1, 160) FROM messages WHERE in_context = 0 ORDER BY seq",
    ).map(([seq, role, tool, tokens, text]) => ({ seq, role, tool, tokens, text }));
    const blobs = q(
      "SELECT id, seq, coalesce(tool_name, ''), lines, tokens FROM blobs ORDER BY seq",
    ).map(([id, seq, tool, lines, tokens]) => ({ id, seq, tool, lines, tokens }));
    // The engine marks each message that shows trim regret in its facts (`info.regret`).
    const regret = q(
      `SELECT seq, coalesce(tool_name, ''), info FROM messages WHERE info LIKE '%"regret"%' ORDER BY seq`,
    ).flatMap(([seq, tool, info]) => {
      const r = JSON.parse(info).regret ?? {};
      return r.recalls || r.repeats
        ? [{ seq, tool, kind: r.recalls ? "recall of trimmed content" : "call made again" }]
        : [];
    });
    const [[messages, inContext]] = q(
      "SELECT count(*), coalesce(sum(in_context), 0) FROM messages",
    );
    return { requests, trims, trimmed, blobs, messages, inContext, regret };
  } finally {
    db.close?.();
  }
}

/** The SVG timeline: tokens before (grey) and after (blue) per request, trims and compressions. */
export function timelineSvg(requests, { width = 1000, height = 360 } = {}) {
  const m = { l: 64, r: 16, t: 46, b: 44 };
  const w = width - m.l - m.r;
  const h = height - m.t - m.b;
  const n = Math.max(requests.length, 2);
  // One giant request would flatten the rest: the axis stops above the 95th percentile of what
  // came in (and everything sent); taller points are drawn at the top with their value.
  const sorted = requests.map((r) => r.before).sort((a, b) => a - b);
  const p95 = sorted[Math.floor(0.95 * (sorted.length - 1))] ?? 0;
  const top = Math.max(1000, 1.15 * p95, 1.15 * Math.max(0, ...requests.map((r) => r.after)));
  const x = (i) => m.l + (w * i) / (n - 1);
  const y = (v) => m.t + h - (h * Math.min(v, top)) / top;
  const line = (key) =>
    requests.map((r, i) => `${x(i).toFixed(1)},${y(r[key]).toFixed(1)}`).join(" ");
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(top * f));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="tokens per request">`,
    `<text x="${m.l}" y="16" font-size="14" font-weight="bold">Tokens per request (estimated): received vs sent</text>`,
    ...ticks.map(
      (t) =>
        `<line x1="${m.l}" x2="${width - m.r}" y1="${y(t)}" y2="${y(t)}" stroke="#eee"/><text x="${m.l - 6}" y="${y(t) + 4}" font-size="11" text-anchor="end">${k(t)}</text>`,
    ),
    `<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + h}" stroke="#333"/><line x1="${m.l}" x2="${width - m.r}" y1="${m.t + h}" y2="${m.t + h}" stroke="#333"/>`,
    `<text x="${m.l + w / 2}" y="${height - 8}" font-size="12" text-anchor="middle">request number (1–${requests.length})</text>`,
    `<text x="14" y="${m.t + h / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 ${m.t + h / 2})">tokens</text>`,
    ...requests.map((r, i) =>
      r.reused
        ? `<rect x="${x(i) - 1}" y="${m.t + h + 2}" width="2" height="5" fill="#2a9d4b"/>`
        : "",
    ),
    ...requests.map((r, i) =>
      r.trimmed
        ? `<line x1="${x(i)}" x2="${x(i)}" y1="${m.t}" y2="${m.t + h}" stroke="#d62828" stroke-dasharray="4 3"/>`
        : "",
    ),
    `<polyline fill="none" stroke="#999" stroke-width="1.5" points="${line("before")}"/>`,
    `<polyline fill="none" stroke="#1d4ed8" stroke-width="2" points="${line("after")}"/>`,
    ...requests.map((r, i) =>
      r.compressed ? `<circle cx="${x(i)}" cy="${y(r.after)}" r="4" fill="#f59e0b"/>` : "",
    ),
    ...requests.map((r, i) =>
      r.before > top
        ? `<text x="${x(i) - 4}" y="${m.t + 12}" font-size="10" text-anchor="end" fill="#666">↑ ${k(r.before)}</text>`
        : "",
    ),
    ...requests.map((r, i) =>
      r.failOpen
        ? `<circle cx="${x(i)}" cy="${y(r.before)}" r="4" fill="none" stroke="#d62828"/>`
        : "",
    ),
    `<g font-size="11" transform="translate(${m.l}, 30)">`,
    `<line x1="0" x2="20" y1="0" y2="0" stroke="#999" stroke-width="1.5"/><text x="26" y="4">received by the plugin</text>`,
    `<line x1="160" x2="180" y1="0" y2="0" stroke="#1d4ed8" stroke-width="2"/><text x="186" y="4">sent to the model</text>`,
    `<line x1="300" x2="300" y1="-6" y2="6" stroke="#d62828" stroke-dasharray="4 3"/><text x="308" y="4">trim</text>`,
    `<circle cx="350" cy="0" r="4" fill="#f59e0b"/><text x="358" y="4">tool output compressed</text>`,
    `<rect x="505" y="-3" width="2" height="6" fill="#2a9d4b"/><text x="512" y="4">prefix reused (cache hit)</text>`,
    `</g></svg>`,
  ];
  return parts.join("\n");
}

/** The whole page. */
export function reportHtml(sessionId, d) {
  const sum = (key) => d.requests.reduce((a, r) => a + r[key], 0);
  const before = sum("before");
  const after = sum("after");
  const reusable = d.requests.filter((r, i) => i > 0 && !r.trimmed).length;
  const reused = d.requests.filter((r) => r.reused).length;
  const saved = before ? Math.round((100 * (before - after)) / before) : 0;
  const row = (cells) => `<tr>${cells.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>smarter-compact · ${esc(sessionId)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#111;max-width:1040px}
h1{font-size:20px;margin:0 0 4px}.facts{color:#444;margin:0 0 16px}
table{border-collapse:collapse;width:100%;font-size:12px;margin:8px 0 24px}td,th{border-bottom:1px solid #e5e5e5;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f6f6f6}td.n{text-align:right}.text{color:#555;font-family:ui-monospace,monospace}
</style></head><body>
<h1>Session ${esc(sessionId)}</h1>
<p class="facts">${d.requests.length} requests · ${d.messages} messages stored, ${d.inContext} still in context · ${d.trims.length} trims · ${d.blobs.length} outputs compressed ·
tokens sent ${k(after)} of ${k(before)} received (${saved}% less) · prefix reused on ${reused} of ${reusable} requests between trims</p>
${timelineSvg(d.requests)}
<h2>Trims</h2>
<table><tr><th>trim</th><th>messages removed</th><th>tokens removed</th><th>kind</th></tr>
${d.trims.map((t) => row([`#${t.seq}`, t.messages, k(t.tokens), t.manual ? "manual" : "threshold"])).join("\n")}</table>
<h2>Trim regret (${d.regret.length}: what the agent fetched back or ran again after a cut)</h2>
<table><tr><th>message</th><th>tool</th><th>what</th></tr>
${d.regret.map((r) => row([r.seq, r.tool, r.kind])).join("\n")}</table>
<h2>Compressed outputs (full text kept)</h2>
<table><tr><th>blob</th><th>message</th><th>tool</th><th>tokens</th><th>lines</th></tr>
${d.blobs.map((b) => `<tr><td>${esc(b.id)}</td><td>${b.seq}</td><td>${esc(b.tool)}</td><td>${k(b.tokens)}</td><td>${b.lines}</td></tr>`).join("\n")}</table>
<h2>What was trimmed (${d.trimmed.length} messages, all searchable)</h2>
<table><tr><th>message</th><th>role</th><th>tool</th><th>tokens</th><th>text</th></tr>
${d.trimmed.map((m) => `<tr><td>${m.seq}</td><td>${esc(m.role)}</td><td>${esc(m.tool)}</td><td class="n">${k(m.tokens)}</td><td class="text">${esc(m.text)}</td></tr>`).join("\n")}</table>
</body></html>
`;
}
