// Regenerates fixtures/recorded-*.json: what each real host passed to the probe's message hook
// during a scripted two-turn session (turn 2 via --continue):
//   turn 1: "run echo hi"      → [reasoning + bash `echo hi`] → text
//   turn 2: "probe and fail"   → parallel [probe {note:"abc"}, bash that writes to stderr and exits 3] → text
// Usage (Node 20):  node record-fixtures.mjs [opencode|pi|pi-legacy ...]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "./lib/scripted-server.mjs";
import {
  runOpenCode,
  runPi,
  setupOpenCodeHome,
  setupPiHome,
  readJsonLines,
  hostPaths,
  cleanup,
} from "./lib/hosts.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const fx = (f) => path.join(here, "fixtures", f);
const ROOT_PLACEHOLDER = "/tmp/e2e-root";

const turns = [
  {
    prompt: "run echo hi",
    script: [
      { reasoning: "The user wants me to run echo.", tool: "bash", args: { command: "echo hi" } },
      { text: "It printed hi." },
    ],
  },
  {
    prompt: "probe and fail",
    script: [
      {
        calls: [
          { tool: "probe", args: { note: "abc" } },
          { tool: "bash", args: { command: "echo oops >&2; exit 3" } },
        ],
      },
      { text: "The probe answered and the command failed with exit code 3." },
    ],
  },
];

async function record(kind) {
  const paths = hostPaths();
  const srv = await startServer({ script: turns.flatMap((t) => t.script) });
  const legacy = kind === "pi-legacy";
  const home =
    kind === "opencode"
      ? setupOpenCodeHome({ server: srv, pluginPath: fx("probe-opencode.js") })
      : setupPiHome({ server: srv });
  const log = path.join(home.root, "probe.jsonl");
  const results = [];
  for (const [i, t] of turns.entries()) {
    const common = { home, prompt: t.prompt, env: { PROBE_LOG: log }, continue: i > 0 };
    const r =
      kind === "opencode"
        ? await runOpenCode(common)
        : await runPi({
            ...common,
            extensionPath: fx("probe-pi.js"),
            legacy,
            sessionDir: home.sessionDir,
          });
    if (r.code !== 0)
      throw new Error(`${kind} turn ${i + 1} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    results.push(r);
  }
  await srv.close();
  const hook = kind === "opencode" ? "experimental.chat.messages.transform" : "context";
  const invocations = readJsonLines(log)
    .filter((e) => e.hook === hook)
    .map(({ input, messages }) => (input === undefined ? { messages } : { input, messages }));
  const version =
    kind === "opencode" ? paths.opencodeVersion : legacy ? paths.piLegacyVersion : paths.piVersion;
  const pkg =
    kind === "opencode"
      ? "opencode-ai"
      : legacy
        ? "@mariozechner/pi-coding-agent"
        : "@earendil-works/pi-coding-agent";
  const doc = {
    host: `${pkg}@${version}`,
    hook,
    generatedBy: "tests/e2e/record-fixtures.mjs",
    note:
      "Each invocation is exactly what the host passed to the probe's hook, serialised with JSON.stringify before the probe edited it. " +
      `Temp paths are replaced by ${ROOT_PLACEHOLDER}. Turn 2 ran with --continue. The scripted replies are in \`turns\`.`,
    turns,
    invocations,
  };
  const text = JSON.stringify(doc, null, 1).split(home.root).join(ROOT_PLACEHOLDER);
  const out = fx(
    kind === "opencode"
      ? "recorded-opencode-messages.json"
      : legacy
        ? "recorded-pi-legacy-messages.json"
        : "recorded-pi-messages.json",
  );
  fs.writeFileSync(out, text + "\n");
  cleanup(home);
  console.log(
    `${kind}: ${invocations.length} hook invocations → ${path.relative(here, out)} (${results.map((r) => r.ms + " ms").join(", ")})`,
  );
}

const kinds = process.argv.slice(2);
for (const k of kinds.length ? kinds : ["opencode", "pi", "pi-legacy"]) await record(k);
