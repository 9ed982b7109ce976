// The OpenCode plugin: rewrites every request in `experimental.chat.messages.transform` (in
// place: OpenCode ignores a new array), adds the standing instruction, the five tools and the
// /smarter-compact:compact command. Under Bun it uses bun:sqlite; under Node (the desktop app)
// a Node backend — nothing imports bun:* statically.
import { runTool } from "../tools.js";
import {
  COMPACT_COMMAND,
  STANDING_INSTRUCTION,
  compactorPool,
  promptTokens,
  safeSessionId,
  toolDefinitions,
} from "./common.js";

const sessionOf = (messages) => messages.find((m) => m?.info?.sessionID)?.info.sessionID;

/** The model of the request: the newest user message names it, else the newest assistant. */
function modelOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i]?.info;
    if (info?.role === "user" && info.model?.modelID) return info.model.modelID;
    if (info?.role === "assistant" && info.modelID) return info.modelID;
  }
  return "";
}

async function server(_input, options = {}) {
  const pool = compactorPool(options);
  const systemTokens = new Map(); // session → estimated tokens of the system prompt
  const tools = {};
  for (const def of await toolDefinitions()) {
    tools[def.name] = {
      description: def.description,
      args: def.parameters.properties,
      async execute(args, ctx) {
        try {
          return await runTool(
            await pool.get(safeSessionId(ctx?.sessionID ?? "opencode")),
            def.name,
            args,
          );
        } catch (e) {
          return `smarter-compact error ${e.code ?? "E_INTERNAL"}: ${e.message}`;
        }
      },
    };
  }
  return {
    tool: tools,
    async config(cfg) {
      cfg.command ??= {};
      cfg.command[COMPACT_COMMAND] ??= {
        description:
          "Trim this session's context now (smarter-compact); trimmed turns stay searchable",
        template:
          "[smarter-compact] The context was just trimmed on request. Continue with the task; use smart_compact_search for anything you no longer see.",
      };
    },
    async "command.execute.before"(input) {
      if (input?.command !== COMPACT_COMMAND || !input.sessionID) return;
      await (await pool.get(safeSessionId(input.sessionID))).compactNow();
    },
    async "experimental.chat.system.transform"(input, output) {
      if (!Array.isArray(output?.system)) return;
      if (!output.system.some((s) => s.includes(STANDING_INSTRUCTION)))
        output.system.push(STANDING_INSTRUCTION);
      if (input?.sessionID)
        systemTokens.set(input.sessionID, await promptTokens(output.system.join("\n")));
    },
    async "experimental.chat.messages.transform"(_input, output) {
      const messages = output?.messages;
      const sid = Array.isArray(messages) ? sessionOf(messages) : undefined;
      if (!sid) return;
      try {
        const c = await pool.get(safeSessionId(sid));
        const res = await c.transform(messages, {
          format: "opencode",
          model: modelOf(messages),
          overheadTokens: systemTokens.get(sid) ?? 0,
        });
        if (res.messages !== messages) messages.splice(0, messages.length, ...res.messages);
      } catch {
        // never break the host: the request goes out as it came
      }
    },
  };
}

export default { id: "smarter-compact", server };
