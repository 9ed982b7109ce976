// enable/disable claude|codex: the CLIs' own config files get exactly our additions, and lose
// exactly them again; enabling starts the proxy (stopped here afterwards).
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { run, tempDir } from "./helpers/cli.mjs";

const PORT = String(41_000 + (process.pid % 2000));

function env(home) {
  return {
    HOME: home,
    SMARTER_COMPACT_STATE_DIR: join(home, "state"),
    CONTEXT_PROXY_PORT: PORT,
    CODEX_HOME: join(home, ".codex"),
  };
}

test("enable claude, again, then disable: settings and MCP config back byte for byte", () => {
  const home = tempDir("sc-claude-");
  const e = env(home);
  mkdirSync(join(home, ".claude"), { recursive: true });
  const settings =
    '{\n  "model": "opus",\n  "env": {\n    "DISABLE_TELEMETRY": "1"\n  },\n  "permissions": {\n    "allow": ["Bash(npm test:*)"]\n  }\n}\n';
  const claudeJson =
    '{\n  "numStartups": 7,\n  "mcpServers": {\n    "other": { "type": "stdio", "command": "other-mcp" }\n  }\n}\n';
  writeFileSync(join(home, ".claude", "settings.json"), settings);
  writeFileSync(join(home, ".claude.json"), claudeJson);
  try {
    const on = run(["enable", "claude"], { env: e });
    assert.equal(on.code, 0, on.stderr);
    assert.match(on.stdout, /proxy (started|running) on http:\/\/127\.0\.0\.1:/);
    const s = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    assert.equal(s.env.ANTHROPIC_BASE_URL, `http://127.0.0.1:${PORT}`);
    assert.equal(s.env.DISABLE_TELEMETRY, "1");
    const m = JSON.parse(readFileSync(join(home, ".claude.json"), "utf8"));
    assert.ok(m.mcpServers.other && m.mcpServers["smarter-compact"].args.includes("mcp"));
    const again = run(["enable", "claude"], { env: e });
    assert.match(again.stdout, /already enabled; nothing changed/);
    const health = run(["proxy", "status", "--json"], { env: e });
    assert.equal(JSON.parse(health.stdout).ok, true);
    assert.equal(run(["disable", "claude"], { env: e }).code, 0);
    assert.equal(readFileSync(join(home, ".claude", "settings.json"), "utf8"), settings);
    assert.equal(readFileSync(join(home, ".claude.json"), "utf8"), claudeJson);
  } finally {
    run(["proxy", "stop"], { env: e });
  }
});

test("enable codex, again, then disable: config.toml back byte for byte; a foreign provider is refused", () => {
  const home = tempDir("sc-codex-");
  const e = env(home);
  mkdirSync(join(home, ".codex"), { recursive: true });
  const config =
    '# my settings\nmodel = "gpt-5.5" # default\napproval_policy = "on-request"\n\n[profiles.fast]\nmodel = "gpt-5-mini"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--stdio"]\n';
  const file = join(home, ".codex", "config.toml");
  writeFileSync(file, config);
  try {
    assert.equal(run(["enable", "codex"], { env: e }).code, 0);
    const text = readFileSync(file, "utf8");
    assert.ok(
      text.startsWith(
        '# my settings\nmodel = "gpt-5.5" # default\napproval_policy = "on-request"\nmodel_provider = "smarter-compact"\n',
      ),
      text,
    );
    assert.match(
      text,
      /\[model_providers\.smarter-compact\]\nname = "smarter-compact \(loopback proxy\)"\nbase_url = "http:\/\/127\.0\.0\.1:\d+\/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"/,
    );
    assert.match(
      text,
      /\[mcp_servers\.smarter-compact\]\ncommand = ".+"\nargs = \[".+cli\.js", "mcp", "--ensure-proxy"\]/,
    );
    assert.match(text, /\[mcp_servers\.docs\]\ncommand = "docs-mcp"/);
    assert.match(run(["enable", "codex"], { env: e }).stdout, /already enabled/);
    assert.equal(run(["disable", "codex"], { env: e }).code, 0);
    assert.equal(readFileSync(file, "utf8"), config);
    writeFileSync(file, 'model_provider = "azure"\n');
    const refused = run(["enable", "codex"], { env: e });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /E_CONFIG: .*model_provider = "azure"/);
    assert.equal(readFileSync(file, "utf8"), 'model_provider = "azure"\n');
  } finally {
    run(["proxy", "stop"], { env: e });
  }
});

test("enable|disable codex on a config.toml that is not TOML: E_ARG, the file untouched, no proxy started", () => {
  const home = tempDir("sc-codex-bad-");
  const e = env(home);
  mkdirSync(join(home, ".codex"), { recursive: true });
  const file = join(home, ".codex", "config.toml");
  const broken = 'model = "gpt-5.5"\n[profiles\n';
  writeFileSync(file, broken);
  for (const action of ["enable", "disable"]) {
    const r = run([action, "codex"], { env: e });
    assert.equal(r.code, 1, action);
    assert.match(r.stderr, /E_ARG: .*not valid TOML: .*line 2/, action);
    assert.doesNotMatch(r.stdout, /proxy (started|running)/, action);
    assert.equal(readFileSync(file, "utf8"), broken, action);
  }
});

test("adding then removing a property gives the same bytes back, whatever the file looks like", async () => {
  const { addProperty, removeProperty } = await import("../../npm/js/cli/json-props.js");
  const { parse } = await import("jsonc-parser");
  const texts = [
    "{}\n", // (an object holding only whitespace, `{\n}`, comes back as `{}`)
    '{\n  // my settings\n  "model": "opus" // fast\n}\n',
    '{\r\n\t"a": 1,\r\n\t"env": {\r\n\t\t"X": "1"\r\n\t}\r\n}\r\n',
    '{"a":{"b":[1,2]},"env":{}}',
    '\uFEFF{\n    "env": {\n        "FOO": "bar"\n    }\n}\n',
  ];
  for (const t of texts) {
    for (const path of [
      ["env", "ANTHROPIC_BASE_URL"],
      ["mcpServers", "smarter-compact"],
      ["top"],
    ]) {
      const { text: added, created } = addProperty(
        t,
        path,
        path[0] === "mcpServers" ? { type: "stdio", args: ["x", "mcp"] } : "http://127.0.0.1:4101",
        "f.json",
      );
      const parsed = parse(added.replace(/^\uFEFF/, ""));
      assert.ok(
        path.reduce((o, k) => o?.[k], parsed) !== undefined,
        `${JSON.stringify(t)} ${path}`,
      );
      assert.equal(
        removeProperty(added, path, "f.json", created),
        t,
        `${JSON.stringify(t)} ${path}`,
      );
    }
  }
});
