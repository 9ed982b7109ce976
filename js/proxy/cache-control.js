// Anthropic clients move their rolling `cache_control` marker to the last block of the last
// message on every request. Left in, the marker would change a stored message's bytes each time
// and break the sticky cut; so the engine sees the messages without markers, and the client's
// markers are put back afterwards at the same place (counted from the end of each message, so a
// pointer block added at the front moves nothing). Markers on messages that were trimmed go with
// them: the request never has more breakpoints than the client set.

/** Copies of the messages without block-level markers, and where the markers were. */
export function stripMarkers(messages) {
  const markers = new Map(); // message index → [[block index from the end, cache_control]]
  const stripped = messages.map((m, i) => {
    if (
      !Array.isArray(m?.content) ||
      !m.content.some((b) => b && typeof b === "object" && "cache_control" in b)
    )
      return m;
    const found = [];
    const content = m.content.map((b, j) => {
      if (!b || typeof b !== "object" || !("cache_control" in b)) return b;
      found.push([m.content.length - 1 - j, b.cache_control]);
      const { cache_control: _dropped, ...rest } = b;
      return rest;
    });
    markers.set(i, found);
    return { ...m, content };
  });
  return { stripped, markers };
}

/** Puts the markers back on the output messages (`sources[k]`: input index of output message k). */
export function restoreMarkers(messages, sources, markers, originals) {
  return messages.map((m, k) => {
    const found = markers.get(sources[k]);
    if (!found) return m;
    if (m === originals.stripped[sources[k]]) return originals.messages[sources[k]]; // untouched: the client's own object
    const content = [...m.content];
    for (const [fromEnd, cc] of found) {
      const j = content.length - 1 - fromEnd;
      if (j >= 0 && content[j] && typeof content[j] === "object")
        content[j] = { ...content[j], cache_control: cc };
    }
    return { ...m, content };
  });
}

/** The prompt cache's lifetime an Anthropic request asks for, in ms: an hour when any
 * `cache_control` marker (system, tools or messages) says `ttl: "1h"`, else 0 (the default five
 * minutes, or the configured lifetime). */
export function askedTtlMs(body) {
  const blocks = [body?.system, body?.tools, ...(body?.messages ?? []).map((m) => m?.content)];
  for (const list of blocks) {
    if (!Array.isArray(list)) continue;
    if (list.some((b) => b?.cache_control?.ttl === "1h")) return 3_600_000;
  }
  return 0;
}
