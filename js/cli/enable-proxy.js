// `smarter-compact enable|disable claude|codex`: points the CLI at the loopback proxy and
// registers the MCP server with the recall tools, in the CLI's own config files; the rest of
// each file stays as it was, byte for byte. Enabling also starts the proxy.
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "jsonc-parser";
import { addProperty, removeProperty } from "./json-props.js";
import { readIfThere, writeAtomic } from "./files.js";
import { resolveStateDir } from "../config.js";
import { codedError } from "../errors.js";
import { ensureProxy, proxyPort } from "../proxy/daemon.js";
import { tomlEditor } from "./toml-edit.js";

const CLI = fileURLToPath(new URL("../cli.js", import.meta.url));
const NAME = "smarter-compact";
const mcpArgs = (stateDir) => [
  CLI,
  "mcp",
  "--ensure-proxy",
  ...(stateDir ? ["--state-dir", stateDir] : []),
];

const claudeDir = () => process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude");

/** Claude Code: settings.json `env.ANTHROPIC_BASE_URL`, and the MCP server in ~/.claude.json. */
const claude = {
  label: "Claude Code",
  files: () => ({
    settings: join(claudeDir(), "settings.json"),
    mcp: process.env.CLAUDE_CONFIG_DIR
      ? join(process.env.CLAUDE_CONFIG_DIR, ".claude.json")
      : join(homedir(), ".claude.json"),
  }),
  async enable(url, stateDir) {
    const f = this.files();
    const edits = [];
    const settings = readIfThere(f.settings) ?? "{}\n";
    const url0 = parse(settings)?.env?.ANTHROPIC_BASE_URL;
    if (url0 && url0 !== url)
      throw codedError(
        "E_CONFIG",
        `${f.settings} already sets env.ANTHROPIC_BASE_URL = ${url0}; remove it first`,
      );
    if (!url0) {
      const { text, created } = addProperty(
        settings,
        ["env", "ANTHROPIC_BASE_URL"],
        url,
        f.settings,
      );
      edits.push([f.settings, text, { path: ["env", "ANTHROPIC_BASE_URL"], created }]);
    }
    const mcp = readIfThere(f.mcp) ?? "{}\n";
    const server = { type: "stdio", command: process.execPath, args: mcpArgs(stateDir) };
    if (!parse(mcp)?.mcpServers?.[NAME]) {
      const { text, created } = addProperty(mcp, ["mcpServers", NAME], server, f.mcp);
      edits.push([f.mcp, text, { path: ["mcpServers", NAME], created }]);
    }
    return edits;
  },
  async disable(record) {
    const f = this.files();
    const edits = [];
    const settings = readIfThere(f.settings);
    if (
      settings !== null &&
      String(parse(settings)?.env?.ANTHROPIC_BASE_URL ?? "").startsWith("http://127.0.0.1:")
    ) {
      edits.push([
        f.settings,
        removeProperty(
          settings,
          ["env", "ANTHROPIC_BASE_URL"],
          f.settings,
          record[f.settings] ?? 0,
        ),
      ]);
    }
    const mcp = readIfThere(f.mcp);
    if (mcp !== null && parse(mcp)?.mcpServers?.[NAME])
      edits.push([f.mcp, removeProperty(mcp, ["mcpServers", NAME], f.mcp, record[f.mcp] ?? 0)]);
    return edits;
  },
};

/** Codex: `model_provider` and `[model_providers.smarter-compact]`, plus `[mcp_servers.smarter-compact]`. */
const codex = {
  label: "Codex",
  files: () => ({
    config: join(process.env.CODEX_HOME ?? join(homedir(), ".codex"), "config.toml"),
  }),
  async enable(url, stateDir) {
    const editor = await tomlEditor();
    const f = this.files();
    let text = readIfThere(f.config) ?? "";
    const current = /^\s*model_provider\s*=\s*"([^"]*)"/m.exec(text)?.[1];
    if (current && current !== NAME) {
      throw codedError(
        "E_CONFIG",
        `${f.config} already sets model_provider = "${current}"; the proxy forwards to OpenAI's API (SMARTER_COMPACT_OPENAI_UPSTREAM to change it) — remove that line first`,
      );
    }
    const set = (path, value) => (text = editor.tomlSet(text, path, value));
    set(["model_provider"], NAME);
    set(["model_providers", NAME, "name"], "smarter-compact (loopback proxy)");
    set(["model_providers", NAME, "base_url"], `${url}/v1`);
    set(["model_providers", NAME, "env_key"], "OPENAI_API_KEY");
    set(["model_providers", NAME, "wire_api"], "responses");
    set(["mcp_servers", NAME, "command"], process.execPath);
    set(["mcp_servers", NAME, "args"], mcpArgs(stateDir));
    return [[f.config, text]];
  },
  async disable() {
    const editor = await tomlEditor();
    const f = this.files();
    let text = readIfThere(f.config);
    if (text === null) return [];
    for (const path of [
      ["mcp_servers", NAME],
      ["model_providers", NAME],
    ])
      text = editor.tomlRemove(text, path);
    if (/^\s*model_provider\s*=\s*"smarter-compact"/m.test(text))
      text = editor.tomlRemove(text, ["model_provider"]);
    return [[f.config, text]];
  },
};

export const PROXY_HOSTS = { claude, codex };

/** What `enable` created in each file (so `disable` removes exactly that): in the state dir. */
function recordFile(stateDir, name) {
  return join(resolveStateDir(stateDir), "context", "enabled", `${name}.json`);
}

/** `enable|disable claude|codex`: returns the exit code. */
export async function enableProxyHost({ action, host: name, stateDir, port }, out) {
  const host = PROXY_HOSTS[name];
  const url = `http://127.0.0.1:${proxyPort(port)}`;
  const recordPath = recordFile(stateDir, name);
  const record = JSON.parse(readIfThere(recordPath) ?? "{}");
  const edits = action === "enable" ? await host.enable(url, stateDir) : await host.disable(record);
  let changed = 0;
  for (const [file, text, made] of edits) {
    if (readIfThere(file) === text) continue;
    writeAtomic(file, text);
    changed++;
    if (made) record[file] = made.created;
    else delete record[file];
    out(`${host.label}: ${action}d smarter-compact in ${file}`);
  }
  if (changed) writeAtomic(recordPath, JSON.stringify(record));
  if (!changed) out(`${host.label}: smarter-compact is already ${action}d; nothing changed`);
  if (action === "enable") {
    const h = await ensureProxy({ stateDir, port });
    out(
      `proxy ${h.started ? "started" : "running"} on ${url} (pid ${h.pid}); recall tools via \`smarter-compact mcp\``,
    );
  }
  return 0;
}
