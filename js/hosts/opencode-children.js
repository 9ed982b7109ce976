// Which OpenCode sessions are children: the task tool runs a subagent in a session of its own
// whose `parentID` names the session that called it. Asked once per session through the plugin's
// SDK client (`session.get`), which OpenCode 1.18 hands to every plugin.

/** Tells child sessions from top-level ones: `isChild(id)` resolves to true for a session with a
 * parent, false for one without or when OpenCode cannot say (a failed look-up is asked again on
 * the next request, never cached). Never rejects. */
export function childSessions(client) {
  const known = new Map(); // session id → Promise<boolean>
  return {
    isChild(sessionId) {
      let p = known.get(sessionId);
      if (!p) {
        p = (async () => {
          const res = await client.session.get({ path: { id: sessionId } });
          if (!res?.data) throw new Error("no session");
          return typeof res.data.parentID === "string" && res.data.parentID !== "";
        })();
        known.set(sessionId, p);
        p.catch(() => known.delete(sessionId));
      }
      return p.catch(() => false);
    },
  };
}
