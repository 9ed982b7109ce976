// Which conversation a proxied request belongs to, so each gets its own session store: the
// client's own id when it sends one (Claude Code's session header, Codex's prompt_cache_key),
// otherwise a fingerprint of how the conversation starts. A Claude Code subagent shares its
// parent's session header, so it is told apart by its own marks (below) and gets its own store.
import { createHash } from "node:crypto";
import { safeSessionId } from "../pool.js";

const short = (s) => createHash("sha256").update(s).digest("hex").slice(0, 16);

/** Claude Code's first system block, which names the client and (for a subagent) says so. */
const BILLING = "x-anthropic-billing-header:";

/** The first user text of a message list (Anthropic, Chat Completions or Responses items). */
function firstUserText(list) {
  const user = (list ?? []).find((m) => m?.role === "user");
  if (!user) return "";
  if (typeof user.content === "string") return user.content;
  return (user.content ?? []).map((b) => (typeof b?.text === "string" ? b.text : "")).join("\n");
}

/** An Anthropic `system` as a list of text blocks. */
function systemBlocks(system) {
  if (typeof system === "string") return [{ text: system }];
  return Array.isArray(system) ? system.filter((b) => typeof b?.text === "string") : [];
}

/** Whether Claude Code marked the request as a subagent's: `x-claude-code-agent-id`, or
 * `cc_is_subagent=true` in the billing block of its system prompt. */
function claudeSubagent(headers, body) {
  if (headers["x-claude-code-agent-id"]) return true;
  return systemBlocks(body.system).some(
    (b) => b.text.startsWith(BILLING) && /\bcc_is_subagent=true\b/.test(b.text),
  );
}

/** How a conversation starts: its system prompt (less the billing block, whose hash suffix is
 * the client's) and its first user text. */
function opening(system, list) {
  const kept = systemBlocks(system)
    .filter((b) => !b.text.startsWith(BILLING))
    .map((b) => b.text);
  return short(JSON.stringify(kept) + firstUserText(list).slice(0, 4000));
}

/**
 * The conversation of a request to one of the proxy's routes: `{ sessionId, subagent }`.
 * Claude Code sends one `x-claude-code-session-id` on every request of a session, its side
 * requests (titles, probes) and its own /compact included: those all stay in the session's store.
 * A subagent's requests carry the same header plus its marks (see `claudeSubagent`): they go to
 * `claude-<session>-agent-<agent id>`, or, without the agent header, to a fingerprint of how the
 * subagent's conversation starts. A client with no session header is keyed by the fingerprint of
 * its system prompt and first user text, which sets its subagents apart too. `subagent` is true
 * for a subagent's request.
 */
export function conversationOf(route, headers, body) {
  if (route === "anthropic") {
    const id = headers["x-claude-code-session-id"];
    const subagent = claudeSubagent(headers, body);
    if (!id) {
      const start = JSON.stringify(body.system ?? "") + firstUserText(body.messages).slice(0, 4000);
      return { sessionId: `claude-${short(start)}`, subagent };
    }
    if (!subagent) return { sessionId: safeSessionId(`claude-${id}`), subagent };
    const agent = headers["x-claude-code-agent-id"];
    const own = agent ? `agent-${agent}` : `sub-${opening(body.system, body.messages)}`;
    return { sessionId: safeSessionId(`claude-${id}-${own}`), subagent };
  }
  if (route === "responses") {
    const key = body.prompt_cache_key ?? headers["session-id"];
    if (key) return { sessionId: safeSessionId(`codex-${key}`), subagent: false };
    const start =
      JSON.stringify(body.instructions ?? "") + firstUserText(body.input).slice(0, 4000);
    return { sessionId: `responses-${short(start)}`, subagent: false };
  }
  const start =
    firstUserText(body.messages).slice(0, 4000) + JSON.stringify(body.messages?.[0] ?? "");
  return { sessionId: `chat-${short(start)}`, subagent: false };
}
