// Synthetic coding-agent sessions of any length for the speed and scale measurements (OpenAI
// format): user turns now and then, assistant messages with a bash tool call, tool results whose
// sizes follow a heavy-tailed mix (OUTPUT_MIX).
import { rng } from "./rng.mjs";

const FILES = [
  "src/app/models.py",
  "src/app/views.py",
  "lib/core/engine.ts",
  "tests/test_query.py",
  "pkg/store/sqlite.go",
  "README.md",
  "src/trim/plan.rs",
];
const CMDS = [
  "grep -rn %w %f",
  "sed -n '%n,%mp' %f",
  "python -m pytest %f -x -q",
  "git diff %f",
  "cat %f | head -n %n",
  "ls -la src/%w",
];
const WORDS = [
  "queryset",
  "annotate",
  "_base_manager",
  "fingerprint",
  "compress",
  "sticky_cut",
  "in_context",
  "tokenize",
  "resolve",
  "migrate",
];

function textOf(r, bytes) {
  const lines = [];
  let n = 0;
  while (n < bytes) {
    const kind = r.int(0, 3);
    const l =
      kind === 0
        ? `${r.pick(FILES)}:${r.int(1, 900)}:    ${r.pick(WORDS)} = self.${r.pick(WORDS)}(${r.pick(WORDS)}, limit=${r.int(1, 99)})`
        : kind === 1
          ? `    def ${r.pick(WORDS)}_${r.hex(3)}(self, ${r.pick(WORDS)}):  # ${r.pick(WORDS)} ${r.int(0, 9999)}`
          : kind === 2
            ? `2026-03-14T10:${r.int(10, 59)}:${r.int(10, 59)}Z INFO ${r.pick(WORDS)} done in ${r.int(1, 999)}ms id=${r.hex(8)}`
            : `E   AssertionError: expected ${r.int(0, 500)} rows, got ${r.int(0, 500)} (${r.pick(WORDS)})`;
    lines.push(l);
    n += l.length + 1;
  }
  return lines.join("\n");
}

/** Tool-output sizes in bytes: a draw x in [0, 1) below `below` (the first such band) picks the
 * band, then a size uniformly in min–max. */
export const OUTPUT_MIX = [
  { below: 0.9, min: 200, max: 3000 },
  { below: 0.98, min: 5000, max: 15000 },
  { below: 1, min: 30000, max: 60000 },
];

/** A session of `n` messages (system + task, then exchanges); `scale` multiplies output sizes. */
export function codingSession(n, seed = 7, scale = 1) {
  const r = rng(seed);
  const msgs = [
    {
      role: "system",
      content:
        "You are a coding agent. Use the bash tool to inspect and change the repository. ".repeat(
          8,
        ),
    },
    {
      role: "user",
      content:
        "Fix the failing test in tests/test_query.py: annotate() after values() drops the alias.",
    },
  ];
  let k = 0;
  while (msgs.length < n) {
    if (k > 0 && k % 20 === 0 && msgs.length < n - 1) {
      msgs.push({
        role: "user",
        content: `Now also check ${r.pick(FILES)} for the same problem with ${r.pick(WORDS)}.`,
      });
      if (msgs.length >= n) break;
    }
    const id = `call_${k}`;
    const cmd = r
      .pick(CMDS)
      .replace("%w", r.pick(WORDS))
      .replace("%f", r.pick(FILES))
      .replace("%n", String(r.int(1, 400)))
      .replace("%m", String(r.int(401, 800)));
    msgs.push({
      role: "assistant",
      content: `Let me look at ${r.pick(WORDS)} (step ${k}).`,
      tool_calls: [
        {
          id,
          type: "function",
          function: { name: "bash", arguments: JSON.stringify({ command: cmd }) },
        },
      ],
    });
    if (msgs.length >= n) {
      msgs.pop();
      msgs.push({ role: "assistant", content: "Done." });
      break;
    }
    const x = r.next();
    const size = OUTPUT_MIX.find((b) => x < b.below);
    const bytes = Math.round(scale * r.int(size.min, size.max));
    msgs.push({
      role: "tool",
      tool_call_id: id,
      content: `<returncode>0</returncode>\n<output>\n${textOf(r, bytes)}\n</output>`,
    });
    k++;
  }
  return msgs.slice(0, n);
}

/** Tool results of log lines, `perOutput` lines each, until `rows` lines in all. */
export function logRows(rows, perOutput = 100, seed = 11) {
  const r = rng(seed);
  const msgs = [
    { role: "system", content: "You are a log triage agent." },
    { role: "user", content: "Read the logs." },
  ];
  let line = 0;
  for (let k = 0; line < rows; k++) {
    const id = `call_${k}`;
    msgs.push({
      role: "assistant",
      content: `Page ${k}.`,
      tool_calls: [
        {
          id,
          type: "function",
          function: { name: "read_logs", arguments: JSON.stringify({ page: k }) },
        },
      ],
    });
    const ls = [];
    for (let j = 0; j < perOutput && line < rows; j++, line++) {
      ls.push(
        `2026-03-14T10:22:31Z L${String(line).padStart(6, "0")} ${r.pick(WORDS)} ${r.pick(["INFO", "WARN", "ERROR"])} req=${r.hex(8)} latency_ms=${r.int(1, 4000)} msg="${r.pick(WORDS)} ${r.pick(WORDS)}"`,
      );
    }
    msgs.push({ role: "tool", tool_call_id: id, content: ls.join("\n") });
  }
  return msgs;
}
