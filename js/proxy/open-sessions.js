// The proxy's open sessions: at most `max` compactors (each an open SQLite store: a few file
// descriptors and its caches) at a time. When another must open, the least recently used one that
// no request is using is closed; its store stays on disk and the next request for it opens it
// again, from what the store holds.

/**
 * An LRU of open resources keyed by id. `open(id)` makes one (a promise); `close(value)` releases
 * it. `lease(id)` resolves to `{ value, release }`: the resource is not closed while leased, so
 * the cap can be passed for as long as more than `max` requests are in flight at once.
 */
export function openSessions({ max, open, close }) {
  const entries = new Map(); // in use order, least recent first: id → { value, busy }
  const closing = new Set();

  function evict() {
    for (const [id, e] of entries) {
      if (entries.size <= max) return;
      if (e.busy) continue;
      entries.delete(id);
      const done = e.value
        .then((v) => close(v))
        .catch(() => {}) // a store that fails to close is dropped either way
        .finally(() => closing.delete(done));
      closing.add(done);
    }
  }

  return {
    /** The resource for `id`, opened if needed, marked in use until `release()`. */
    async lease(id) {
      let e = entries.get(id);
      if (e) entries.delete(id);
      else {
        e = { value: open(id), busy: 0 };
        const made = e;
        // A resource that fails to open is not kept; the next request tries again.
        e.value.catch(() => entries.get(id) === made && entries.delete(id));
      }
      entries.set(id, e);
      e.busy++;
      const entry = e;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        entry.busy--;
        evict();
      };
      evict();
      try {
        return { value: await entry.value, release };
      } catch (err) {
        release();
        throw err;
      }
    },
    /** How many are open (or opening). */
    get size() {
      return entries.size;
    },
    /** Closes every resource, leased or not, and waits for the closes under way. */
    async closeAll() {
      const all = [...entries.values()];
      entries.clear();
      for (const e of all) await e.value.then((v) => close(v)).catch(() => {});
      await Promise.all([...closing]);
    },
  };
}
