// The "Proxy soak" section of bench/REPORT.md, from bench/out/soak.json (bench/lib/soak.mjs).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rewriteProvenance } from "./report-merge.mjs";

/** The markers around the section in REPORT.md. */
export const SOAK_BEGIN = "<!-- soak:begin -->";
export const SOAK_END = "<!-- soak:end -->";
const [BEGIN, END] = [SOAK_BEGIN, SOAK_END];
/** The section goes before this heading when the report has none yet. */
const BEFORE = "## Real-model mode";

const f0 = (x) => (x == null ? "–" : x.toFixed(0));
const f1 = (x) => (x == null ? "–" : x.toFixed(1));

/** The section's markdown, markers included. */
export function soakSection(s) {
  const statusRows = Object.entries(s.mix).map(([kind, n]) => {
    const by = Object.entries(s.statuses[kind] ?? {})
      .sort()
      .map(
        ([st, k]) =>
          `${st === "-1" ? "dropped by the client" : st === "0" ? "connection error" : st}: ${k}`,
      )
      .join(", ");
    return `| ${kind} | ${n} | ${by} |`;
  });
  const within = s.rssRatio != null && s.rssRatio <= 1.2;
  return [
    BEGIN,
    "## Proxy soak",
    "",
    `\`smarter-compact proxy run\` as its own process on loopback, in front of a local upstream: ${s.sent} requests across ${s.sessions} sessions (${s.concurrency} at a time, after a warm-up of a tenth as many requests of the same mix on 100 other sessions, from which the start figures are taken; 85% of the requests go to the ~40 sessions active at that point of the schedule, the rest to any of them), in ${f0(s.seconds)} s (load average ${f1(s.load)} at the end; \`node bench/run.mjs --only=soak\`; bench/lib/soak.mjs). The proxy keeps at most 64 session stores open; its body cap is 64 MiB.`,
    "",
    "| kind | requests | statuses |",
    "|---|---:|---|",
    ...statusRows,
    "",
    `"normal" are Anthropic Messages, Responses and Chat Completions requests of growing conversations; "gzip", "br", "deflate" the same compressed; "not-json", "not-a-list", "bad-items" go upstream as sent (fail-open); "text-plain" and "origin" (a browser's request) are refused; "declared-over-cap" declares 64 MiB + 1, sends a few bytes and reads the answer; "chunked-over-cap" streams 65 MiB; "bomb" is a gzip body that inflates to 65 MiB of one letter; "not-reading" asks for a 32 MiB answer and reads none of it for 1 s; "slow-headers" sends half a header line and waits 1 s.`,
    "",
    "| figure | value |",
    "|---|---:|",
    `| crashes of the proxy | ${s.crashes} |`,
    `| normal or compressed requests not answered 200 | ${s.failed} |`,
    `| latency p50 / p99 / max (normal and compressed, ms) | ${f1(s.p50Ms)} / ${f1(s.p99Ms)} / ${f1(s.maxMs)} |`,
    `| RSS at the start (after the warm-up) | ${f0(s.startRssMB)} MB |`,
    `| peak RSS | ${f0(s.peakRssMB)} MB |`,
    `| RSS after the soak (settled) | ${f0(s.afterRssMB)} MB (${f1((s.rssRatio - 1) * 100)}% from the start: ${within ? "within" : "NOT within"} 20%) |`,
    `| open file descriptors: start / peak / end | ${s.startFds} / ${s.peakFds} / ${s.endFds ?? "–"} |`,
    `| sessions seen / stores open at the end | ${s.sessionsSeen ?? "–"} / ${s.openSessions ?? "–"} |`,
    "",
    "The latencies are the clients' with 16 requests in flight on the proxy's one event loop (they include the wait behind the others, bombs and 64 MiB bodies included); \"connection error\" for chunked-over-cap is a client still sending when the proxy answered 413 and closed. The start figures are taken after the warm-up because the first requests of this load grow the heaps once (V8's, malloc's, the stores' caches); the check is that ten times as many requests add nothing to that.",
    "",
    "What one body costs the proxy (a fresh process each, after one small request; a conversation of 64 kB tool outputs, the peak resident memory while it is read, rewritten and stored):",
    "",
    "| body | RSS before | peak RSS | peak − before | × body | RSS after (settled) | engine memory after | time |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...s.bodyCost.map(
      (c) =>
        `| ${f1(c.sizeMB)} MB | ${f0(c.idleMB)} MB | ${f0(c.peakMB)} MB | ${f0(c.peakMB - c.idleMB)} MB | ${f1((c.peakMB - c.idleMB) / c.sizeMB)} | ${f0(c.afterMB)} MB | ${f0(c.engineMB)} MB | ${f0(c.ms)} ms |`,
    ),
    "",
    "Of that peak, the engine's WebAssembly memory (`engine_memory_bytes` in `/health`) grows to several times the body, and a WebAssembly memory never shrinks: that part stays with the proxy process until it restarts. The rest is the JavaScript side (the body's text, its parsed form, the list serialised for the engine): garbage once the request is done, but an idle process does not collect it, so the resident set stays at the peak (\"RSS after\") until later requests make V8 collect.",
    END,
  ].join("\n");
}

/** `text` with the contents line linking the section (before "real-model mode"). */
function withContentsLink(text) {
  return text
    .split("\n")
    .map((line) =>
      line.startsWith("Contents: ") && !line.includes("](#proxy-soak)")
        ? line.replace(
            " · [real-model mode](#real-model-mode)",
            " · [proxy soak](#proxy-soak) · [real-model mode](#real-model-mode)",
          )
        : line,
    )
    .join("\n");
}

/** Puts the section of `<out>/soak.json` into `<reportDir>/REPORT.md` (replacing the one there)
 * and links it from the contents line; false when there is no saved soak. `alone`: the soak
 * phase was run by itself (`--only=soak`), and the header says it was merged in afterwards. */
export function mergeSoakReport({ out, reportDir, alone = false }) {
  const saved = join(out, "soak.json");
  const reportPath = join(reportDir, "REPORT.md");
  if (!existsSync(saved) || !existsSync(reportPath)) return false;
  const section = soakSection(JSON.parse(readFileSync(saved, "utf8")));
  const text = readFileSync(reportPath, "utf8");
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  let next;
  if (a >= 0 && b > a) next = text.slice(0, a) + section + text.slice(b + END.length);
  else {
    const at = text.indexOf(`\n${BEFORE}`);
    next =
      at >= 0
        ? `${text.slice(0, at + 1)}${section}\n\n${text.slice(at + 1)}`
        : `${text.trimEnd()}\n\n${section}\n`;
  }
  next = withContentsLink(next);
  if (alone) {
    const date = new Date().toISOString().slice(0, 10);
    next = rewriteProvenance(next, { merged: { name: "proxy soak", phase: "soak", date } });
  }
  writeFileSync(reportPath, next);
  return true;
}
