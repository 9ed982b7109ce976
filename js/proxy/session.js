// Which conversation a proxied request belongs to, so each gets its own session store: the
// client's own id when it sends one (Claude Code's session header, Codex's prompt_cache_key),
// otherwise a fingerprint of how the conversation starts.
import { createHash } from "node:crypto";
import { safeSessionId } from "../pool.js";

const short = (s) => createHash("sha256").update(s).digest("hex").slice(0, 16);

/** The first user text of a message list (Anthropic, Chat Completions or Responses items). */
function firstUserText(list) {
  const user = (list ?? []).find((m) => m?.role === "user");
  if (!user) return "";
  if (typeof user.content === "string") return user.content;
  return (user.content ?? []).map((b) => (typeof b?.text === "string" ? b.text : "")).join("\n");
}

/** The session id of a request to one of the proxy's routes. */
export function sessionIdOf(route, headers, body) {
  if (route === "anthropic") {
    const id = headers["x-claude-code-session-id"];
    if (id) return safeSessionId(`claude-${id}`);
    return `claude-${short(JSON.stringify(body.system ?? "") + firstUserText(body.messages).slice(0, 4000))}`;
  }
  if (route === "responses") {
    const key = body.prompt_cache_key ?? headers["session-id"];
    if (key) return safeSessionId(`codex-${key}`);
    return `responses-${short(JSON.stringify(body.instructions ?? "") + firstUserText(body.input).slice(0, 4000))}`;
  }
  return `chat-${short(firstUserText(body.messages).slice(0, 4000) + JSON.stringify(body.messages?.[0] ?? ""))}`;
}
