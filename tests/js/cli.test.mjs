// The `smarter-compact` command line, run as a process from the built package (npm/js/cli.js)
// on real sessions replayed into a temp state dir.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { parse as parseJsonc } from "jsonc-parser";
import { HOSTS, replayInto, run, tempDir } from "./helpers/cli.mjs";

const STATE = tempDir("sc-cli-state-");
const A = "django-14034"; // 86 messages, 3 trims and 2 compressed outputs at trim_at 8000
const B = "sympy-15976";
let a;

before(async () => {
  a = await replayInto(STATE, "django__django-14034.json", A);
  await replayInto(STATE, "sympy__sympy-15976.json", B); // replayed last: the latest activity
});

const k1 = (n) => (n >= 1_000_000 ? `${(n / 1e6).toFixed(1)}M` : `${(n / 1000).toFixed(1)}k`);

describe("status", () => {
  test("a table of every session, latest activity first", () => {
    const r = run(["status", "--state-dir", STATE]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.match(lines[0], /sessions in .*context\/sessions/);
    for (const h of [
      "session",
      "messages",
      "trims",
      "requests",
      "tokens before→after",
      "saved",
      "fail-opens",
      "last activity",
    ])
      assert.ok(lines[1].includes(h), h);
    assert.equal(lines.length, 5);
    assert.ok(lines[2].startsWith(B) && lines[3].startsWith(A), r.stdout);
    // The run has no model folder (helpers/cli.mjs): the last line says embeddings are off.
    assert.match(lines[4], /^embeddings: off — .* not found; full-text search only$/);
    const cols = lines[3].split(/\s{2,}/);
    const u = a.status.usage;
    assert.deepEqual(cols.slice(0, 4), [
      A,
      String(a.status.messages),
      String(a.status.trims),
      String(u.requests),
    ]);
    assert.equal(cols[4], `${k1(u.before_tokens)} → ${k1(u.after_tokens)}`);
    assert.equal(
      cols[5],
      `${((100 * (u.before_tokens - u.after_tokens)) / u.before_tokens).toFixed(1)}%`,
    );
    assert.equal(cols[6], "0");
    assert.match(cols[7], /^\d{4}-\d\d-\d\d \d\d:\d\d$/);
  });

  test("--json carries the same figures", () => {
    const r = run(["status", "--json"], { env: { SMARTER_COMPACT_STATE_DIR: STATE } });
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.state_dir, STATE);
    assert.deepEqual(
      j.sessions.map((s) => s.session),
      [B, A],
    );
    const row = j.sessions[1];
    assert.equal(row.messages, a.status.messages);
    assert.equal(row.trims, a.status.trims);
    assert.ok(row.trims > 0);
    assert.equal(row.requests, a.status.usage.requests);
    assert.equal(row.before_tokens, a.status.usage.before_tokens);
    assert.equal(row.after_tokens, a.status.usage.after_tokens);
    assert.ok(row.after_tokens < row.before_tokens);
    assert.equal(row.fail_opens, 0);
    assert.ok(Date.parse(j.sessions[0].last_activity) >= Date.parse(row.last_activity));
  });

  test("one session: its status text, or JSON", () => {
    const r = run(["status", "--session", A, "--state-dir", STATE]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`session ${A}`));
    assert.match(
      r.stdout,
      new RegExp(`messages stored: ${a.status.messages}; trims: ${a.status.trims}`),
    );
    const j = JSON.parse(run(["status", "--session", A, "--json", "--state-dir", STATE]).stdout);
    assert.equal(j.session_id, A);
    assert.equal(j.usage.requests, a.status.usage.requests);
    assert.equal(j.stored.blobs, 2);
  });

  test("an empty state dir says so and succeeds", () => {
    const empty = tempDir();
    const r = run(["status", "--state-dir", empty]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^no sessions yet in /);
    assert.deepEqual(
      JSON.parse(run(["status", "--json", "--state-dir", empty]).stdout).sessions,
      [],
    );
  });

  test("an unknown session is an error, and no store is created for it", () => {
    const r = run(["status", "--session", "nosuch", "--state-dir", STATE]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^smarter-compact: E_NO_SESSION: no session "nosuch"/);
    assert.equal(existsSync(join(STATE, "context", "sessions", "nosuch.db")), false);
    const bad = run(["status", "--session", "../escape", "--state-dir", STATE]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^smarter-compact: E_BAD_ID: /);
  });
});

describe("context set / show", () => {
  test("round trip through config.toml, comments kept", () => {
    const dir = tempDir();
    const file = join(dir, "context", "config.toml");
    mkdirSync(join(dir, "context"));
    const original =
      "# my thresholds — keep this comment\n[context_proxy]\ntrim_to_fraction = 0.3\n\n[context_proxy.trim_at]\nhaiku = 95000\n";
    writeFileSync(file, original);
    const set = run(["context", "set", "claude-sonnet-*", "180000", "--state-dir", dir]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /\+ "claude-sonnet-\*" = 180000/);
    const text = readFileSync(file, "utf8");
    assert.ok(text.startsWith("# my thresholds — keep this comment\n"), text);
    assert.ok(text.includes("haiku = 95000"));
    assert.ok(text.includes('"claude-sonnet-*" = 180000'));

    const show = JSON.parse(run(["context", "show", "--json", "--state-dir", dir]).stdout);
    assert.equal(show.config_file, file);
    assert.equal(show.trim_at["claude-sonnet-*"], 180000);
    assert.equal(show.trim_at.haiku, 95000);
    assert.equal(show.trim_at_override, null);
    const human = run(["context", "show", "--state-dir", dir]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /"claude-sonnet-\*"\s+180000/);

    const change = run(["context", "set", "haiku", "90000", "--state-dir", dir]);
    assert.match(change.stdout, /- haiku = 95000\n\s+\+ haiku = 90000/);
    assert.equal(
      JSON.parse(run(["context", "show", "--json", "--state-dir", dir]).stdout).trim_at.haiku,
      90000,
    );

    const before = readFileSync(file, "utf8");
    const again = run(["context", "set", "haiku", "90000", "--state-dir", dir]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /nothing changed/);
    assert.equal(readFileSync(file, "utf8"), before);
  });

  test("creates the file and its directories; bad values change nothing", () => {
    const dir = join(tempDir(), "fresh");
    const r = run(["context", "set", "default", "100000", "--state-dir", dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      readFileSync(join(dir, "context", "config.toml"), "utf8"),
      "[context_proxy.trim_at]\ndefault = 100000\n",
    );
    const notNumber = run(["context", "set", "default", "12k", "--state-dir", dir]);
    assert.equal(notNumber.code, 2);
    const tooSmall = run(["context", "set", "default", "5", "--state-dir", dir]);
    assert.equal(tooSmall.code, 1);
    assert.match(tooSmall.stderr, /^smarter-compact: E_ARG: /);
    assert.equal(
      readFileSync(join(dir, "context", "config.toml"), "utf8"),
      "[context_proxy.trim_at]\ndefault = 100000\n",
    );
    assert.equal(run(["context", "set", "default", "--state-dir", dir]).code, 2);
    assert.equal(run(["context", "frob"]).code, 2);
  });

  test("show without a config.toml: the built-in table", () => {
    const show = JSON.parse(run(["context", "show", "--json", "--state-dir", tempDir()]).stdout);
    assert.equal(show.config_file_exists, false);
    assert.deepEqual(show.trim_at, { haiku: 95000, default: 125000 });
    const env = JSON.parse(
      run(["context", "show", "--json", "--state-dir", tempDir()], {
        env: { CONTEXT_TRIM_AT_TOKENS: "50000" },
      }).stdout,
    );
    assert.equal(env.trim_at_override, 50000);
    assert.equal(env.origins.trim_at_tokens, "CONTEXT_TRIM_AT_TOKENS");
  });

  test("a project's .smarter-compact.toml over the user's config.toml, under the environment; show says where each came from", () => {
    const state = tempDir();
    mkdirSync(join(state, "context"));
    writeFileSync(
      join(state, "context", "config.toml"),
      "[context_proxy]\ncompress_over_tokens = 3000\ntrim_to_fraction = 0.4\n[context_proxy.trim_at]\nhaiku = 90000\nqwen = 30000\n",
    );
    // The project's file is found from a folder below it, up to the repository's root.
    const project = tempDir();
    mkdirSync(join(project, ".git"));
    mkdirSync(join(project, "src", "deep"), { recursive: true });
    const set = run(["context", "set", "qwen", "50%", "--project", project, "--state-dir", state]);
    assert.equal(set.code, 0, set.stderr);
    const projectFile = join(project, ".smarter-compact.toml");
    assert.equal(readFileSync(projectFile, "utf8"), '[context_proxy.trim_at]\nqwen = "50%"\n');
    writeFileSync(
      projectFile,
      `${readFileSync(projectFile, "utf8")}[context_proxy]\ntrim_to_fraction = 0.2\n`,
    );
    // (a [context_proxy] table after its sub-table is valid TOML.)
    const show = (env = {}) =>
      JSON.parse(
        run(
          [
            "context",
            "show",
            "--json",
            "--project",
            join(project, "src", "deep"),
            "--state-dir",
            state,
          ],
          { env },
        ).stdout,
      );
    const s = show();
    assert.equal(s.project_config_file, projectFile);
    assert.equal(s.trim_at.qwen, "50%", "the project's entry replaces the user's");
    assert.equal(s.trim_at.haiku, 90000, "the user's other entries stay");
    assert.equal(s.trim_to_fraction, 0.2);
    assert.equal(s.compress_over_tokens, 3000);
    assert.equal(s.origins["trim_at.qwen"], ".smarter-compact.toml");
    assert.equal(s.origins["trim_at.haiku"], "config.toml");
    assert.equal(s.origins.trim_to_fraction, ".smarter-compact.toml trim_to_fraction");
    assert.equal(s.origins.compress_over_tokens, "config.toml compress_over_tokens");
    assert.equal(s.origins["trim_at.default"], undefined, "built in");
    const e = show({ CONTEXT_TRIM_TO_FRACTION: "0.5" });
    assert.equal(e.trim_to_fraction, 0.5);
    assert.equal(e.origins.trim_to_fraction, "CONTEXT_TRIM_TO_FRACTION");
    const human = run(["context", "show", "--project", project, "--state-dir", state]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^project config: .*\.smarter-compact\.toml$/m);
    assert.match(human.stdout, /"qwen"\s+50%\s+\.smarter-compact\.toml$/m);
    assert.match(human.stdout, /"default"\s+125000\s+built-in$/m);
    assert.match(
      human.stdout,
      /trimmed to: 0\.2 of the threshold \(\.smarter-compact\.toml trim_to_fraction\)/,
    );
    // Outside the repository (a folder with no project file up to a .git), only the user's file.
    const other = tempDir();
    mkdirSync(join(other, ".git"));
    const none = JSON.parse(
      run(["context", "show", "--json", "--project", other, "--state-dir", state]).stdout,
    );
    assert.equal(none.project_config_file, null);
    assert.equal(none.trim_at.qwen, 30000);
    assert.equal(run(["context", "set", "qwen", "150%", "--project", project]).code, 1);
    assert.equal(run(["context", "set", "qwen", "half", "--project", project]).code, 2);
  });
});

describe("enable / disable", () => {
  const OPENCODE_ENTRY = pathToFileURL(join(HOSTS, "opencode.js")).href;
  const PI_ENTRY = join(HOSTS, "pi.js");

  test("opencode: a user's opencode.json with comments and other plugins comes back byte for byte", () => {
    const xdg = tempDir();
    const file = join(xdg, "opencode", "opencode.json");
    mkdirSync(join(xdg, "opencode"));
    const original = [
      "{",
      "  // my OpenCode setup",
      '  "$schema": "https://opencode.ai/config.json",',
      '  "plugin": [',
      '    "opencode-wakatime", // time tracking',
      '    "file:///home/me/my-plugin.js"',
      "  ],",
      '  "model": "anthropic/claude-sonnet-4", /* trailing comma next */',
      "}",
      "",
    ].join("\n");
    writeFileSync(file, original);
    const env = { XDG_CONFIG_HOME: xdg };
    const on = run(["enable", "opencode"], { env });
    assert.equal(on.code, 0, on.stderr);
    assert.match(on.stdout, /enabled smarter-compact in .*opencode\.json/);
    const enabled = readFileSync(file, "utf8");
    const errors = [];
    const cfg = parseJsonc(enabled, errors, { allowTrailingComma: true });
    assert.deepEqual(errors, []);
    assert.deepEqual(cfg.plugin, [
      "opencode-wakatime",
      "file:///home/me/my-plugin.js",
      OPENCODE_ENTRY,
    ]);
    assert.equal(cfg.model, "anthropic/claude-sonnet-4");
    assert.ok(enabled.includes("// my OpenCode setup") && enabled.includes("// time tracking"));

    const twice = run(["enable", "opencode"], { env });
    assert.equal(twice.code, 0);
    assert.match(twice.stdout, /already enabled/);
    assert.equal(readFileSync(file, "utf8"), enabled);

    const off = run(["disable", "opencode"], { env });
    assert.equal(off.code, 0, off.stderr);
    assert.equal(readFileSync(file, "utf8"), original);
    const offAgain = run(["disable", "opencode"], { env });
    assert.match(offAgain.stdout, /not enabled/);
    assert.equal(readFileSync(file, "utf8"), original);
  });

  test("opencode: opencode.jsonc is used when it exists; a file without a plugin array round-trips", () => {
    const xdg = tempDir();
    mkdirSync(join(xdg, "opencode"));
    const file = join(xdg, "opencode", "opencode.jsonc");
    const original =
      '{\n\t"$schema": "https://opencode.ai/config.json",\n\t"theme": "dark" // mine\n}\n';
    writeFileSync(file, original);
    const env = { XDG_CONFIG_HOME: xdg };
    assert.equal(run(["enable", "opencode"], { env }).code, 0);
    assert.deepEqual(parseJsonc(readFileSync(file, "utf8")).plugin, [OPENCODE_ENTRY]);
    assert.equal(existsSync(join(xdg, "opencode", "opencode.json")), false);
    assert.equal(run(["disable", "opencode"], { env }).code, 0);
    assert.equal(readFileSync(file, "utf8"), original);
  });

  test("opencode: --project, a missing file is created; default XDG dir is ~/.config", () => {
    const project = tempDir();
    const r = run(["enable", "opencode", "--project", project]);
    assert.equal(r.code, 0, r.stderr);
    const cfg = JSON.parse(readFileSync(join(project, "opencode.json"), "utf8"));
    assert.deepEqual(cfg, { $schema: "https://opencode.ai/config.json", plugin: [OPENCODE_ENTRY] });
    assert.equal(run(["disable", "opencode", "--project", project]).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(join(project, "opencode.json"), "utf8")), {
      $schema: "https://opencode.ai/config.json",
    });

    const home = tempDir();
    assert.equal(run(["enable", "opencode"], { env: { HOME: home } }).code, 0);
    assert.deepEqual(
      JSON.parse(readFileSync(join(home, ".config", "opencode", "opencode.json"), "utf8")).plugin,
      [OPENCODE_ENTRY],
    );
  });

  test("opencode: a broken file is reported and left alone", () => {
    const project = tempDir();
    const broken = '{ "plugin": [ "a", }\n';
    writeFileSync(join(project, "opencode.json"), broken);
    const r = run(["enable", "opencode", "--project", project]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^smarter-compact: E_CONFIG: .*not valid JSON/);
    assert.equal(readFileSync(join(project, "opencode.json"), "utf8"), broken);
    writeFileSync(join(project, "opencode.json"), '{"plugin": "one"}');
    assert.match(
      run(["enable", "opencode", "--project", project]).stderr,
      /E_CONFIG: .*"plugin" is not an array/,
    );
  });

  test("pi: settings.json with other extensions comes back byte for byte", () => {
    const agent = tempDir();
    const file = join(agent, "settings.json");
    const original =
      '{\n    "defaultProvider": "anthropic",\n    "extensions": ["/home/me/ext/todo.ts"],\n    "packages": []\n}\n';
    writeFileSync(file, original);
    const env = { PI_CODING_AGENT_DIR: agent };
    const on = run(["enable", "pi"], { env });
    assert.equal(on.code, 0, on.stderr);
    const enabled = readFileSync(file, "utf8");
    assert.deepEqual(JSON.parse(enabled).extensions, ["/home/me/ext/todo.ts", PI_ENTRY]);
    assert.deepEqual(JSON.parse(enabled).packages, []);
    assert.equal(run(["enable", "pi"], { env }).code, 0);
    assert.equal(readFileSync(file, "utf8"), enabled);
    assert.equal(run(["disable", "pi"], { env }).code, 0);
    assert.equal(readFileSync(file, "utf8"), original);
  });

  test("pi: default ~/.pi/agent/settings.json, created when missing; disable on no file is a no-op", () => {
    const home = tempDir();
    assert.match(run(["disable", "pi"], { env: { HOME: home } }).stdout, /does not exist/);
    assert.equal(existsSync(join(home, ".pi")), false);
    assert.equal(run(["enable", "pi"], { env: { HOME: home } }).code, 0);
    assert.deepEqual(
      JSON.parse(readFileSync(join(home, ".pi", "agent", "settings.json"), "utf8")),
      { extensions: [PI_ENTRY] },
    );
  });

  test("usage errors", () => {
    assert.equal(run(["enable"]).code, 2);
    assert.equal(run(["enable", "vscode"]).code, 2);
    assert.equal(run(["disable", "pi", "extra"]).code, 2);
  });
});

describe("search / sql / get", () => {
  test("search prints the tool's text", () => {
    const r = run([
      "search",
      A,
      "MultiValueField",
      "--scope",
      "all",
      "--limit",
      "2",
      "--state-dir",
      STATE,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^<smarter-compact-results untrusted="true">/);
    assert.match(r.stdout, /\[1\] message \d+ .*\n.*MultiValueField/);
    assert.match(r.stdout, /\[2\] /);
    assert.doesNotMatch(r.stdout, /\[3\] /);
    const j = JSON.parse(
      run(["search", A, "MultiValueField", "--scope", "all", "--json", "--state-dir", STATE])
        .stdout,
    );
    assert.ok(j.hits.length > 2 && j.hits.every((h) => h.snippet.includes("MultiValueField")));
    const trimmed = JSON.parse(
      run(["search", A, "MultiValueField", "--json", "--state-dir", STATE]).stdout,
    );
    assert.ok(trimmed.hits.every((h) => h.in_context === false));
  });

  test("sql runs one read-only query; a write is refused with its code", () => {
    const r = run([
      "sql",
      A,
      "SELECT count(*) AS n, sum(in_context = 0) AS trimmed FROM messages",
      "--state-dir",
      STATE,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /n \| trimmed\n(\d+) \| (\d+)\n\(1 row/);
    const [, n, trimmed] = /\n(\d+) \| (\d+)\n/.exec(r.stdout);
    assert.equal(Number(n), a.status.messages);
    assert.ok(Number(trimmed) > 0);
    const refused = run(["sql", A, "DELETE FROM messages", "--state-dir", STATE]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^smarter-compact: E_SQL_REFUSED: /);
    assert.equal(refused.stdout, "");
  });

  test("get pages a compressed output and reads a message", () => {
    const ids = JSON.parse(
      run(["sql", A, "SELECT id, lines FROM blobs ORDER BY seq", "--json", "--state-dir", STATE])
        .stdout,
    );
    assert.equal(ids.rows.length, 2);
    const [id, lines] = ids.rows[0];
    const r = run(["get", A, id, "--start", "3", "--end", "7", "--state-dir", STATE]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`\\[smart_compact_get id=${id} lines 3–7 of ${lines}\\]`));
    const j = JSON.parse(
      run(["get", A, id, "--start", "3", "--end", "7", "--json", "--state-dir", STATE]).stdout,
    );
    assert.deepEqual([j.page.start_line, j.page.end_line, j.page.total_lines], [3, 7, lines]);
    const msg = run(["get", A, "8", "--state-dir", STATE]);
    assert.match(msg.stdout, /966:class MultiValueField\(Field\):/);
    const missing = run(["get", A, "ffffffffffffffff", "--state-dir", STATE]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^smarter-compact: E_[A-Z_]+: /);
  });

  test("usage errors exit 2, failures exit 1", () => {
    for (const args of [
      ["search", A],
      ["sql", A],
      ["get", A],
      ["get", A, "8", "--start", "x"],
      ["search", A, "q", "--scope", "some"],
      ["search", A, "q", "--bogus"],
      ["status", "extra"],
    ]) {
      const r = run([...args, "--state-dir", STATE]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /^smarter-compact: /);
    }
    const noSession = run(["search", "nosuch", "q", "--state-dir", STATE]);
    assert.equal(noSession.code, 1);
    assert.match(noSession.stderr, /^smarter-compact: E_NO_SESSION: /);
  });
});

describe("help and the demo", () => {
  test("help, no arguments and an unknown command", () => {
    for (const args of [[], ["help"], ["--help"]]) {
      const r = run(args);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^usage: smarter-compact <command>/);
      for (const c of [
        "status",
        "context set",
        "enable opencode|pi",
        "search",
        "sql",
        "get",
        "mcp",
        "rpc",
        "demo",
      ])
        assert.ok(r.stdout.includes(c), c);
    }
    const bad = run(["frobnicate"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown command "frobnicate"[\s\S]*usage:/);
    assert.equal(bad.stdout, "");
  });

  test("demo still replays the bundled session", () => {
    const r = run(["demo"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^smarter-compact demo: psf__requests-1142, 144 messages, trim_at 16000 tokens/,
    );
    assert.match(r.stdout, /requests 72, trims \d+, tool results compressed \d+, fail-opens 0/);
  });
});
