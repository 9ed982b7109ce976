#!/usr/bin/env node
// The smarter-compact command line. Each command lives in js/cli/; this file parses the command
// name, prints usage and turns errors into exit codes (1: the command failed, 2: it was called
// wrong).
import { parseArgs, expectPositional, positiveInt, UsageError } from "./cli/args.js";

const USAGE = `usage: smarter-compact <command> [options]

sessions (state dir: --state-dir D, else SMARTER_COMPACT_STATE_DIR, else ~/.local/share/smarter-compact)
  status [--session ID] [--json]             every session as a table, or one session's status
  search <session> <query> [--limit N] [--scope trimmed|all] [--json]
                                             search a session's stored history
  sql <session> <statement> [--json]         one read-only SQL query on a session's store
  get <session> <id> [--start N] [--end N] [--grep TEXT] [--json]
                                             a page of a compressed output or a stored message
  restore <session> [--json]                 lift the session's latest cut on its next request
                                             (states the one-time prompt-cache write it costs)
  report <session> [--html FILE]             a picture of the session: a self-contained HTML page
                                             (timeline of tokens, trims, compressions, cache reuse)

configuration
  context set <model-pattern> <tokens|N%> [--project DIR]
                                             set [context_proxy.trim_at] in config.toml, or in
                                             the project's .smarter-compact.toml
  context show [--project DIR] [--json]      every value in force and where it came from
  doctor [--json] [--project DIR]            check each host's registration, compaction settings,
                                             rival plugins, SQLite backend and the session stores
  enable opencode|pi [--project DIR]         register the plugin in OpenCode's opencode.json
                                             or Pi's settings.json (idempotent)
  enable claude|codex [--port N]             point Claude Code / Codex at the loopback proxy, register
                                             the recall tools (MCP), start the proxy (idempotent)
  enable embeddings [--project DIR]          install smarter-compact-embed (the embedder and its model)
                                             beside each install of smarter-compact (idempotent)
  disable opencode|pi|claude|codex|embeddings
                                             take it out again

servers
  proxy [run|start|stop|status] [--port N]   the loopback proxy for Claude Code, Codex and any
        [--anthropic-upstream URL] [--openai-upstream URL]   Anthropic/OpenAI client (port 4101)
  mcp [--session ID] [--ensure-proxy]        stdio MCP server with the five tools
  rpc [--session ID]                         answer one JSON-RPC request read from stdin
                                             (tools/call, tools/list, initialize); exit 1 on an error response

  demo [--trim-at N] [--session FILE]        replay a real session and show each request before/after
  help                                       this text`;

const STATE = ["--state-dir"];

const COMMANDS = {
  async demo(argv, out) {
    const { flags, positional } = parseArgs(argv, { values: ["--trim-at", "--session"] });
    expectPositional(positional, [], "demo");
    const { runDemo } = await import("./demo.js");
    await runDemo({ trimAt: positiveInt(flags.trimAt, "--trim-at"), file: flags.session, out });
    return 0;
  },
  async status(argv, out) {
    const { flags, positional } = parseArgs(argv, {
      values: [...STATE, "--session"],
      switches: ["--json"],
    });
    expectPositional(positional, [], "status");
    const { statusCommand } = await import("./cli/status.js");
    return statusCommand(flags, out);
  },
  async context(argv, out) {
    const [sub, ...rest] = argv;
    const { contextSet, contextShow } = await import("./cli/context.js");
    if (sub === "set") {
      const { flags, positional } = parseArgs(rest, { values: [...STATE, "--project"] });
      const [pattern, value] = expectPositional(
        positional,
        ["model-pattern", "tokens"],
        "context set",
      );
      return contextSet({ pattern, value, ...flags }, out);
    }
    if (sub === "show") {
      const { flags, positional } = parseArgs(rest, {
        values: [...STATE, "--project"],
        switches: ["--json"],
      });
      expectPositional(positional, [], "context show");
      return contextShow(flags, out);
    }
    throw new UsageError(
      `context: expected "set" or "show"${sub ? `, got ${JSON.stringify(sub)}` : ""}`,
    );
  },
  async doctor(argv, out) {
    const { flags, positional } = parseArgs(argv, {
      values: [...STATE, "--project"],
      switches: ["--json"],
    });
    expectPositional(positional, [], "doctor");
    const { doctorCommand } = await import("./cli/doctor.js");
    return doctorCommand(flags, out);
  },
  enable: (argv, out) => toggle("enable", argv, out),
  disable: (argv, out) => toggle("disable", argv, out),
  async search(argv, out) {
    const { searchCommand } = await import("./cli/lookup.js");
    return searchCommand(
      parseArgs(argv, { values: [...STATE, "--limit", "--scope", "--mode"], switches: ["--json"] }),
      out,
    );
  },
  async report(argv, out) {
    const { flags, positional } = parseArgs(argv, { values: [...STATE, "--html"] });
    const [session] = expectPositional(positional, ["session"], "report");
    const { reportCommand } = await import("./cli/report.js");
    return reportCommand({ session, html: flags.html, stateDir: flags.stateDir }, out);
  },
  async restore(argv, out) {
    const { flags, positional } = parseArgs(argv, { values: STATE, switches: ["--json"] });
    const [session] = expectPositional(positional, ["session"], "restore");
    const { restoreCommand } = await import("./cli/restore.js");
    return restoreCommand({ session, ...flags }, out);
  },
  async sql(argv, out) {
    const { sqlCommand } = await import("./cli/lookup.js");
    return sqlCommand(parseArgs(argv, { values: STATE, switches: ["--json"] }), out);
  },
  async get(argv, out) {
    const { getCommand } = await import("./cli/lookup.js");
    return getCommand(
      parseArgs(argv, { values: [...STATE, "--start", "--end", "--grep"], switches: ["--json"] }),
      out,
    );
  },
  async proxy(argv, out) {
    const { flags, positional } = parseArgs(argv, {
      values: [...STATE, "--port", "--anthropic-upstream", "--openai-upstream"],
      switches: ["--json"],
    });
    const [sub] = positional;
    if (positional.length > 1) throw new UsageError("proxy: one of run, start, stop, status");
    const { proxyCommand } = await import("./cli/proxy.js");
    return proxyCommand({ sub, flags }, out);
  },
  async mcp(argv) {
    const { flags, positional } = parseArgs(argv, {
      values: [...STATE, "--session"],
      switches: ["--ensure-proxy"],
    });
    expectPositional(positional, [], "mcp");
    if (flags.ensureProxy) {
      // Claude Code and Codex start their MCP servers at launch: the proxy they talk to comes up too.
      const { ensureProxy } = await import("./proxy/daemon.js");
      ensureProxy({ stateDir: flags.stateDir }).catch((e) =>
        console.error(`smarter-compact: ${e.message}`),
      );
    }
    const { mcpCommand } = await import("./cli/mcp.js");
    return mcpCommand(flags);
  },
  async rpc(argv) {
    const { flags, positional } = parseArgs(argv, { values: [...STATE, "--session"] });
    expectPositional(positional, [], "rpc");
    const { rpcCommand } = await import("./cli/rpc.js");
    return rpcCommand(flags);
  },
};

async function toggle(action, argv, out) {
  const { flags, positional } = parseArgs(argv, { values: ["--project", "--port", ...STATE] });
  const [host] = expectPositional(positional, ["opencode|pi|claude|codex|embeddings"], action);
  if (host === "embeddings") {
    const { embeddingsCommand } = await import("./cli/enable-embeddings.js");
    return embeddingsCommand({ action, project: flags.project }, out);
  }
  if (host === "claude" || host === "codex") {
    const { enableProxyHost } = await import("./cli/enable-proxy.js");
    return enableProxyHost({ action, host, stateDir: flags.stateDir, port: flags.port }, out);
  }
  const { enableCommand } = await import("./cli/enable.js");
  return enableCommand({ action, host, project: flags.project }, out);
}

/** Runs the command line; resolves to the exit code. */
async function main(argv, out = (line) => console.log(line)) {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === "help" || cmd === "--help" || cmd === "-h") {
    out(USAGE);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, cmd)) {
    console.error(`smarter-compact: unknown command ${JSON.stringify(cmd)}\n\n${USAGE}`);
    return 2;
  }
  try {
    return await COMMANDS[cmd](rest, out);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`smarter-compact: ${e.message}\n(smarter-compact help for usage)`);
      return 2;
    }
    console.error(`smarter-compact: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? e}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`smarter-compact: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? e}`);
    process.exit(1);
  },
);
