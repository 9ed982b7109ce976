// `smarter-compact doctor [--json] [--state-dir D] [--project DIR]`: is smarter-compact set up
// and working on this machine? For each host found (OpenCode, Pi, Claude Code, Codex: its config
// dir exists or its binary is on the PATH) whether our plugin / extension / proxy is registered
// and installed, the host's own compaction settings against our thresholds, rival context
// plugins beside ours, the SQLite backend each runtime gets, whether embeddings are on (the
// optional smarter-compact-embed package beside each host's npm install of smarter-compact, and
// the one this install finds, js/embedder-package.js); then every session store of the state dir
// (`PRAGMA quick_check`, read-only) and the thresholds in force. Reads only.
//
// Exit status: 0 when nothing needs action (warnings allowed), 1 when a finding is "fail".
// A host that is not found is no failure; a plugin host (OpenCode, Pi) found without our entry
// is one (the plugin does nothing there), a proxy host without the proxy is a warning (routing
// a CLI through the proxy is opt-in).
//
// Discovery: binaries are looked for on SMARTER_COMPACT_DOCTOR_PATH when it is set (empty: look
// for none, only config dirs count; the tests use this), else on PATH. Config locations follow
// the hosts: $XDG_CONFIG_HOME, $XDG_CACHE_HOME, $OPENCODE_CONFIG(_DIR), $PI_CODING_AGENT_DIR,
// $CLAUDE_CONFIG_DIR, $CODEX_HOME, else their defaults under HOME.
import { dirname, join, resolve } from "node:path";
import { resolveStateDir } from "../config.js";
import { CORE_PACKAGE, EMBED_PACKAGE, embeddingsState, packageAt } from "../embedder-package.js";
import { finding } from "./doctor-common.js";
import {
  claudeCompaction,
  codexCompaction,
  opencodeCompaction,
  piCompaction,
  thresholdConfig,
  thresholdRows,
} from "./doctor-compaction.js";
import { checkOpencode, checkPi } from "./doctor-plugins.js";
import { checkClaude, checkCodex } from "./doctor-proxy-hosts.js";
import { checkStores, cliBackend, piBackend } from "./doctor-stores.js";

const LABELS = { opencode: "OpenCode", pi: "Pi", claude: "Claude Code", codex: "Codex" };

/** Whether the embedder package of the same version sits beside a host's npm install of the core
 * (`dir`: its node_modules/smarter-compact): one "ok" finding either way, off is no problem. */
function hostEmbeddings(name, dir) {
  const core = packageAt(dir);
  const sibling = join(dirname(dir), EMBED_PACKAGE);
  const embed = packageAt(sibling);
  const on = core?.name === CORE_PACKAGE && embed?.name === EMBED_PACKAGE;
  const message =
    on && embed.version === core.version
      ? `${LABELS[name]}: embeddings on — ${EMBED_PACKAGE} ${embed.version} beside its install (${sibling})`
      : on
        ? `${LABELS[name]}: embeddings off — ${EMBED_PACKAGE} ${embed.version} beside its install is not its version (${core.version}); \`${join(dir, "js", "cli.js")} enable embeddings\` installs the matching one`
        : `${LABELS[name]}: embeddings off — no ${EMBED_PACKAGE} beside its install in ${dirname(dir)}; \`smarter-compact enable embeddings\` adds it`;
  return finding(name, "embeddings", "ok", message, null);
}

/** Runs every check; returns the report (the `--json` shape). */
export async function doctorReport({ stateDir: explicit, project } = {}) {
  const stateDir = resolveStateDir(explicit);
  const projectDir = resolve(project ?? process.cwd());
  const findings = [];
  let th = null;
  try {
    th = await thresholdConfig(stateDir, projectDir);
  } catch (e) {
    findings.push(
      finding(
        null,
        "config",
        "fail",
        `cannot resolve smarter-compact's configuration: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? e}`,
        "smarter-compact context show   (says which file and value)",
      ),
    );
  }
  const own = await cliBackend();
  const opencode = checkOpencode({ projectDir });
  const pi = checkPi({ projectDir });
  const claude = await checkClaude({ backend: own });
  const codex = await checkCodex({ backend: own });
  if (pi.host.found) {
    const { backend, why } = piBackend(pi.binary);
    pi.host.backend = backend;
    pi.backendWhy = why;
  } else pi.host.backend = null;
  const compaction = { opencode: opencodeCompaction, pi: piCompaction };
  const why = {
    opencode: "OpenCode runs plugins under Bun",
    pi: pi.backendWhy,
    claude: "the proxy and the MCP server run under this Node",
    codex: "the proxy and the MCP server run under this Node",
  };
  for (const [name, r] of Object.entries({ opencode, pi, claude, codex })) {
    if (!r.host.found) continue;
    findings.push(...r.findings);
    if (r.installDir) findings.push(hostEmbeddings(name, r.installDir));
    if (th) {
      if (name === "claude") findings.push(...claudeCompaction(r, th));
      else if (name === "codex") findings.push(...codexCompaction(r, th));
      else findings.push(...compaction[name](r.configs, th));
    }
    findings.push(
      finding(
        name,
        "backend",
        r.host.backend ? "ok" : "fail",
        `${LABELS[name]}: SQLite through ${r.host.backend ?? "no backend"} (${why[name]})`,
        r.host.backend ? null : "npm install sql.js   (in smarter-compact's folder)",
      ),
    );
  }
  const hosts = Object.fromEntries(
    Object.entries({ opencode, pi, claude, codex }).map(([n, r]) => [n, r.host]),
  );
  if (!Object.values(hosts).some((h) => h.found))
    findings.push(
      finding(
        null,
        "hosts",
        "warn",
        "no host found (OpenCode, Pi, Claude Code, Codex: no config dir, no binary on the PATH)",
        "install one, then smarter-compact enable opencode|pi|claude|codex",
      ),
    );
  findings.push(
    finding(
      null,
      "backend",
      own ? "ok" : "fail",
      `this command line: SQLite through ${own ?? "no backend"} (Node ${process.versions.node}${process.env.SMARTER_COMPACT_SQLITE ? ", forced by SMARTER_COMPACT_SQLITE" : ""})`,
      own ? null : "npm install sql.js   (in smarter-compact's folder)",
    ),
  );
  // Embeddings are optional: off (no embedder package) is a plain fact, never a problem.
  const embeddings = await embeddingsState();
  findings.push(finding(null, "embeddings", "ok", embeddings.line, null));
  const { stores, findings: storeFindings } = await checkStores(stateDir);
  findings.push(...storeFindings);
  for (const w of th?.cfg.warnings ?? [])
    findings.push(finding(null, "config", "warn", `configuration: ${w}`, null));
  return {
    ok: !findings.some((f) => f.status === "fail"),
    hosts,
    findings,
    stores,
    thresholds: th ? thresholdRows(th) : [],
  };
}

/** The report as lines a person reads: one per finding, its fix on the next line. */
export function renderReport(r) {
  const tag = { ok: "ok  ", warn: "warn", fail: "FAIL" };
  const lines = [];
  for (const f of r.findings) {
    lines.push(`${tag[f.status]}  ${f.message}`);
    if (f.fix) lines.push(`      fix: ${f.fix}`);
  }
  if (r.thresholds.length) {
    lines.push(
      "thresholds in force (trim at, per model pattern; smarter-compact context show for all values):",
    );
    const w = Math.max(...r.thresholds.map((t) => JSON.stringify(t.pattern).length));
    for (const t of r.thresholds)
      lines.push(
        `  ${JSON.stringify(t.pattern).padEnd(w)}  ${String(t.value).padEnd(7)}  ${t.origin}${t.capped ? " (capped by the window less the host's reserve)" : ""}`,
      );
  }
  const fails = r.findings.filter((f) => f.status === "fail").length;
  lines.push(
    fails
      ? `${fails} problem${fails === 1 ? " needs" : "s need"} action (each FAIL line has its fix)`
      : "nothing needs action",
  );
  return lines.join("\n");
}

/** `doctor [--json] [--state-dir D] [--project DIR]`: exit 0 when nothing needs action, else 1. */
export async function doctorCommand(flags, out) {
  const report = await doctorReport(flags);
  out(flags.json ? JSON.stringify(report, null, 2) : renderReport(report));
  return report.ok ? 0 : 1;
}
