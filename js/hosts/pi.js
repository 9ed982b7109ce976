// The Pi extension: rewrites every request in the `context` event (returning the new list), adds
// the standing instruction, the five tools and the /smarter-compact:compact command.
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

// Pi compacts on its own once the context passes the window less `compaction.reserveTokens`
// (16,384 unless the user's settings say otherwise); the threshold stays below that.
const PI_RESERVE_TOKENS = 16_384;

const sessionOf = (ctx) => safeSessionId(ctx?.sessionManager?.getSessionId?.() ?? "pi");

export default async function smarterCompact(pi, options = {}) {
  // Pi runs in the project's directory: its .smarter-compact.toml is looked for from there.
  const pool = compactorPool({ projectDir: process.cwd(), ...options });
  let systemTokens = 0;

  for (const def of await toolDefinitions()) {
    pi.registerTool({
      name: def.name,
      label: def.name.replace(/_/g, " "),
      description: def.description,
      parameters: def.parameters,
      async execute(_id, params, _signal, _onUpdate, ctx) {
        const text = await runTool(await pool.get(sessionOf(ctx)), def.name, params ?? {});
        return { content: [{ type: "text", text }], details: {} };
      },
    });
  }

  pi.registerCommand(COMPACT_COMMAND, {
    description:
      "Trim this session's context on the next request (smarter-compact); trimmed turns stay searchable",
    async handler(_args, ctx) {
      await (await pool.get(sessionOf(ctx))).compactNow();
      ctx?.ui?.notify?.("smarter-compact: the next request will be trimmed", "info");
    },
  });

  pi.registerCommand(RESTORE_COMMAND, {
    description:
      "Undo the latest trim (smarter-compact): the next request goes out as it would have without it",
    async handler(_args, ctx) {
      const plan = await (await pool.get(sessionOf(ctx))).restore();
      ctx?.ui?.notify?.(restoreText(plan), "info");
    },
  });

  pi.on("before_agent_start", async (event) => {
    const sections = event?.systemPromptOptions?.sections;
    let result;
    if (sections && typeof sections === "object" && !Array.isArray(sections))
      sections["smarter-compact"] = STANDING_INSTRUCTION;
    else if (
      typeof event?.systemPrompt === "string" &&
      !event.systemPrompt.includes(STANDING_INSTRUCTION)
    ) {
      result = { systemPrompt: `${event.systemPrompt}\n\n${STANDING_INSTRUCTION}` };
    }
    systemTokens = await promptTokens(`${event?.systemPrompt ?? ""}\n${STANDING_INSTRUCTION}`);
    return result;
  });

  pi.on("context", async (event, ctx) => {
    try {
      const c = await pool.get(sessionOf(ctx));
      const res = await c.transform(event.messages, {
        format: "pi",
        model: ctx?.model?.id ?? "",
        overheadTokens: systemTokens,
        contextWindow: windowTokens(ctx?.model?.contextWindow),
        reserveTokens: PI_RESERVE_TOKENS,
      });
      if (res.stats?.notice) {
        try {
          ctx?.ui?.notify?.(res.stats.notice, "info");
        } catch {
          // no UI to tell (print mode)
        }
      }
      return { messages: res.messages };
    } catch {
      return undefined; // never break the host: the request goes out as it came
    }
  });

  pi.on("session_shutdown", () => pool.closeAll());
}
