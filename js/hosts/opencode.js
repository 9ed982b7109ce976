// The OpenCode plugin: rewrites every request in `experimental.chat.messages.transform` (in
// place: OpenCode ignores a new array), adds the standing instruction, the five tools and the
// /smarter-compact:compact command. Under Bun it uses bun:sqlite; under Node (the desktop app)
// a Node backend — nothing imports bun:* statically.
import { compactingText } from "../compacting-text.js";
import { runTool } from "../tools.js";
import {
  COMPACT_COMMAND,
  RESTORE_COMMAND,
  STANDING_INSTRUCTION,
  compactorPool,
  promptTokens,
  restoreText,
  safeSessionId,
  toolDefinitions,
  windowTokens,
} from "./common.js";
import { childSessions } from "./opencode-children.js";

// OpenCode's cap on a model's output tokens (OUTPUT_TOKEN_MAX), the reserve its compaction keeps.
const OPENCODE_OUTPUT_MAX = 32_000;

/** One toast in OpenCode's TUI; nothing when there is none (`opencode run`), never a throw. */
function toast(client, message) {
  try {
    client?.tui?.showToast?.({ body: { message, variant: "info" } })?.catch?.(() => {});
  } catch {
    // no TUI to tell
  }
}

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

/** What the threshold needs from a model's `limit`: its window and the reserve OpenCode keeps
 * (its compaction fires above the window less the output limit, at most 32,000 tokens). */
function windowOf(limit) {
  const contextWindow = windowTokens(limit?.context);
  if (!contextWindow) return undefined;
  const maxOutput = windowTokens(limit?.output);
  return {
    contextWindow,
    reserveTokens: Math.min(maxOutput || OPENCODE_OUTPUT_MAX, OPENCODE_OUTPUT_MAX),
  };
}

/** The provider and model of the newest user message ({ providerID, modelID }), if any. */
function userModelOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i]?.info;
    if (info?.role === "user" && info.model?.modelID) return info.model;
  }
  return undefined;
}

async function server(input, options = {}) {
  // The project's .smarter-compact.toml is looked for from the directory OpenCode runs in.
  const pool = compactorPool({ projectDir: input?.directory, ...options });
  const client = input?.client; // the SDK client: toasts in the TUI, the sessions' parents
  const children = childSessions(client);
  // A task-tool child session with `subagents = false`: its requests go out as OpenCode made them.
  const leftAlone = async (sid) => !(await pool.trimsSubagents()) && (await children.isChild(sid));
  const systemTokens = new Map(); // session → estimated tokens of the system prompt
  const windows = new Map(); // session → { contextWindow, reserveTokens } of its model
  const limits = new Map(); // "provider/model" → its window, asked of the server once
  // OpenCode rewrites the messages before it builds the system prompt, so the first request of a
  // session in this process (each `opencode run`, the first after a restart) comes before
  // experimental.chat.system.transform has told the model's limit: ask the server for it.
  async function windowFromServer(model) {
    if (!model?.providerID || !client?.config?.providers) return undefined;
    const key = `${model.providerID}/${model.modelID}`;
    if (!limits.has(key)) {
      const res = await client.config.providers();
      const provider = res?.data?.providers?.find((p) => p?.id === model.providerID);
      limits.set(key, windowOf(provider?.models?.[model.modelID]?.limit));
    }
    return limits.get(key);
  }
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
      cfg.command[RESTORE_COMMAND] ??= {
        description:
          "Undo the latest trim (smarter-compact): the next request goes out as it would have without it",
        template:
          "[smarter-compact] The latest trim of the context was lifted on request. Continue with the task.",
      };
    },
    async "command.execute.before"(input) {
      if (!input?.sessionID) return;
      const c = () => pool.get(safeSessionId(input.sessionID));
      try {
        if (input.command === COMPACT_COMMAND) await (await c()).compactNow();
        if (input.command === RESTORE_COMMAND)
          toast(client, restoreText(await (await c()).restore()));
      } catch {
        // never break the host: the command runs without us
      }
    },
    // OpenCode compacts anyway when the user forces it (/compact): its summary is told what the
    // store keeps and how to read it back.
    async "experimental.session.compacting"(input, output) {
      if (!input?.sessionID || !Array.isArray(output?.context)) return;
      try {
        const note = compactingText(
          await (await pool.get(safeSessionId(input.sessionID))).status(),
        );
        if (note) output.context.push(note);
      } catch {
        // never break the host: the summary goes on without the note
      }
    },
    async "experimental.chat.system.transform"(input, output) {
      if (!Array.isArray(output?.system)) return;
      if (input?.sessionID && (await leftAlone(input.sessionID))) return;
      if (!output.system.some((s) => s.includes(STANDING_INSTRUCTION)))
        output.system.push(STANDING_INSTRUCTION);
      if (!input?.sessionID) return;
      try {
        systemTokens.set(input.sessionID, await promptTokens(output.system.join("\n")));
        const window = windowOf(input.model?.limit);
        if (window) windows.set(input.sessionID, window);
      } catch {
        // never break the host: the request goes on with what is known
      }
    },
    async "experimental.chat.messages.transform"(_input, output) {
      const messages = output?.messages;
      const sid = Array.isArray(messages) ? sessionOf(messages) : undefined;
      if (!sid) return;
      try {
        if (await leftAlone(sid)) return;
        const c = await pool.get(safeSessionId(sid));
        if (!windows.has(sid)) {
          const window = await windowFromServer(userModelOf(messages)).catch(() => undefined);
          if (window) windows.set(sid, window);
        }
        const res = await c.transform(messages, {
          format: "opencode",
          model: modelOf(messages),
          overheadTokens: systemTokens.get(sid) ?? 0,
          ...windows.get(sid),
        });
        if (res.messages !== messages) messages.splice(0, messages.length, ...res.messages);
        if (res.stats?.notice) toast(client, res.stats.notice);
      } catch {
        // never break the host: the request goes out as it came
      }
    },
  };
}

export default { id: "smarter-compact", server };
