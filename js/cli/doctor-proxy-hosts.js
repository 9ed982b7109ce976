// `doctor` for the proxy hosts, Claude Code and Codex: whether `enable claude|codex` is in place
// (the base URL pointing at the loopback proxy and the MCP server registered), whether the CLI
// the MCP entry runs still exists, and whether our proxy (one that proves it holds this install's
// secret) answers. Nothing is written.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { PROXY_HOSTS } from "./enable-proxy.js";
import { proxyHealth } from "../proxy/daemon.js";
import { envVar, finding, isDir, onPath, readConfigObject, readText } from "./doctor-common.js";

const NAME = "smarter-compact";

/** The port of a loopback URL of ours (`http://127.0.0.1:N…`), or null. */
const loopbackPort = (url) => /^http:\/\/127\.0\.0\.1:(\d+)/.exec(String(url ?? ""))?.[1] ?? null;

/** Findings on the MCP entry's CLI and the proxy's health, for a registered host. */
async function runtimeFindings(host, label, cliPath, port) {
  const findings = [];
  if (cliPath && !existsSync(cliPath))
    findings.push(
      finding(
        host,
        "installed",
        "fail",
        `${label}: the MCP server entry runs ${cliPath}, which does not exist (smarter-compact moved or was removed)`,
        `smarter-compact disable ${host} && smarter-compact enable ${host}`,
      ),
    );
  const health = port ? await proxyHealth(port) : null;
  if (health && !health.authentic)
    findings.push(
      finding(
        host,
        "proxy",
        "fail",
        `${label}: something on 127.0.0.1:${port} answers as the smarter-compact proxy but cannot prove it holds this install's secret; ${label}'s requests would go through it, and \`mcp --ensure-proxy\` refuses it`,
        `stop that process (an older proxy of this install: smarter-compact proxy stop --port ${port}), or choose another port and run smarter-compact enable ${host} again`,
      ),
    );
  if (port && !health)
    findings.push(
      finding(
        host,
        "proxy",
        "warn",
        `${label}: no smarter-compact proxy answers on 127.0.0.1:${port}; it starts with ${label} (through \`mcp --ensure-proxy\`), requests fail until then`,
        `smarter-compact proxy start --port ${port}`,
      ),
    );
  return findings;
}

/** Claude Code: `{ host, findings, settings, global }` (the parsed files, for the compaction check). */
export async function checkClaude({ backend }) {
  const f = PROXY_HOSTS.claude.files();
  const dir = dirname(f.settings);
  const found = isDir(dir) || onPath("claude") !== null || existsSync(f.mcp);
  const host = { found, registered: false, via: null, config_file: null, installed: null };
  if (!found) return { host: { ...host, backend: null }, findings: [] };
  const findings = [];
  const read = (file) => {
    const { value, error } = readConfigObject(file, { jsonc: true });
    if (error)
      findings.push(
        finding(
          "claude",
          "config",
          "fail",
          `Claude Code: cannot read ${file}: ${error}`,
          `correct ${file} or move it away`,
        ),
      );
    return value ? { file, value } : null;
  };
  const settings = read(f.settings);
  const global = read(f.mcp);
  const url = settings?.value?.env?.ANTHROPIC_BASE_URL;
  const port = loopbackPort(url);
  const server = global?.value?.mcpServers?.[NAME];
  const registered = Boolean(port && server);
  const cliPath =
    Array.isArray(server?.args) && typeof server.args[0] === "string" ? server.args[0] : null;
  if (registered) {
    findings.push(
      finding(
        "claude",
        "registered",
        "ok",
        `Claude Code: talks to the proxy (${url}, in ${f.settings}); recall tools registered in ${f.mcp}`,
      ),
    );
    findings.push(...(await runtimeFindings("claude", "Claude Code", cliPath, port)));
  } else {
    const half = port || server;
    const other = url && !port ? `; its ANTHROPIC_BASE_URL is ${url} (another proxy?)` : "";
    findings.push(
      finding(
        "claude",
        "registered",
        half ? "fail" : "warn",
        half
          ? `Claude Code: half enabled (${port ? `the base URL in ${f.settings}` : `the MCP server in ${f.mcp}`} is there, the other part is not)`
          : `Claude Code: not routed through smarter-compact (optional: the proxy is opt-in)${other}`,
        other
          ? `remove env.ANTHROPIC_BASE_URL from ${f.settings}, then smarter-compact enable claude`
          : "smarter-compact enable claude",
      ),
    );
  }
  return {
    host: {
      found,
      registered,
      via: registered ? "proxy" : null,
      config_file: settings?.file ?? (existsSync(f.settings) ? f.settings : null),
      installed: registered ? (cliPath ? existsSync(cliPath) : null) : null,
      backend,
    },
    findings,
    settings,
    global,
  };
}

/** The part of a TOML text before its first table header, and the body of table `[name]`. */
function tomlParts(text, table) {
  const lines = text.split(/\r?\n/);
  const head = [];
  let i = 0;
  for (; i < lines.length && !/^\s*\[/.test(lines[i]); i++) head.push(lines[i]);
  const header = new RegExp(
    `^\\s*\\[\\s*${table.map((k) => `(?:"${k}"|${k.replace(/[.-]/g, "\\$&")})`).join("\\s*\\.\\s*")}\\s*\\]`,
  );
  const body = [];
  let inside = false;
  for (; i < lines.length; i++) {
    if (/^\s*\[/.test(lines[i])) inside = header.test(lines[i]);
    else if (inside) body.push(lines[i]);
  }
  return { head: head.join("\n"), body: body.join("\n"), has: lines.some((l) => header.test(l)) };
}

/** A top-level `key = "string"` or `key = number` of a TOML text (before any table), or null. */
export function tomlValue(text, key) {
  const m = new RegExp(`^\\s*${key}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([0-9_]+))`, "m").exec(text);
  if (!m) return null;
  return m[3] !== undefined ? Number(m[3].replace(/_/g, "")) : (m[1] ?? m[2]);
}

/** Codex: `{ host, findings, toml }` (`toml`: the file and its top-level part). */
export async function checkCodex({ backend }) {
  const file = PROXY_HOSTS.codex.files().config;
  const dir = envVar("CODEX_HOME") ?? join(homedir(), ".codex");
  const found = isDir(dir) || onPath("codex") !== null;
  const host = { found, registered: false, via: null, config_file: null, installed: null };
  if (!found) return { host: { ...host, backend: null }, findings: [] };
  const text = readText(file);
  if (text === null && existsSync(file))
    return {
      host: { ...host, config_file: file, backend },
      findings: [
        finding(
          "codex",
          "config",
          "fail",
          `Codex: cannot read ${file}`,
          `check the permissions of ${file}`,
        ),
      ],
    };
  const source = text ?? "";
  const provider = tomlParts(source, ["model_providers", NAME]);
  const { head } = provider;
  const mcp = tomlParts(source, ["mcp_servers", NAME]);
  const ours = tomlValue(head, "model_provider") === NAME;
  const registered = ours && provider.has && mcp.has;
  let cliPath = null;
  const args = /^\s*args\s*=\s*(\[.*\])\s*$/m.exec(mcp.body)?.[1];
  try {
    const a = args ? JSON.parse(args) : null;
    if (typeof a?.[0] === "string") cliPath = a[0];
  } catch {
    cliPath = null; // a literal-string array: not checked
  }
  const port = loopbackPort(tomlValue(provider.body, "base_url"));
  const findings = [];
  if (registered) {
    findings.push(
      finding(
        "codex",
        "registered",
        "ok",
        `Codex: model_provider "${NAME}" (the proxy) and its MCP server are set in ${file}`,
      ),
    );
    findings.push(...(await runtimeFindings("codex", "Codex", cliPath, port)));
  } else {
    const half = ours || provider.has || mcp.has;
    const other = tomlValue(head, "model_provider");
    findings.push(
      finding(
        "codex",
        "registered",
        half ? "fail" : "warn",
        half
          ? `Codex: half enabled in ${file} (model_provider, [model_providers.${NAME}] and [mcp_servers.${NAME}] must all be there)`
          : `Codex: not routed through smarter-compact (optional: the proxy is opt-in)${other ? `; model_provider is "${other}"` : ""}`,
        other && other !== NAME
          ? `remove model_provider = "${other}" from ${file}, then smarter-compact enable codex`
          : "smarter-compact enable codex",
      ),
    );
  }
  return {
    host: {
      found,
      registered,
      via: registered ? "proxy" : null,
      config_file: text === null ? null : file,
      installed: registered ? (cliPath ? existsSync(cliPath) : null) : null,
      backend,
    },
    findings,
    toml: { file, head },
  };
}
