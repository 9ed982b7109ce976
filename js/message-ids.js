// Message ids for the engine's cached requests (`Engine.transformCached`): a message object the
// host passes again, unchanged, keeps its id and is not serialised again. A host that builds new
// objects for every request (OpenCode reads its messages back from its database, Pi hands the
// hook a deep copy) names them with a key of its own (`keyOf`), and a new object under a known
// key that is equal to the old one keeps its id too.
//
// "Unchanged" and "equal" are checked by walking the object against a snapshot of what
// JSON.stringify would see (keys, lengths and leaf values, compared with ===: strings by
// reference first, then by content): a walk of the object's fields, not a copy of its bytes,
// but still one visit of every field of the history. So only the newest messages (where a host
// fills in a tool result) and the messages the engine sent back edited are checked before the
// request is built; the older ones are checked after it, when the event loop is idle (while the
// model answers), and at the latest before the next request. A message changed in place among
// the older ones is sent again, under a new id, by the next request. Objects JSON.stringify
// would not read as plain data (a toJSON method, a prototype other than Object's or Array's)
// always go as text.

const ARRAY = Symbol("array");
const OBJECT = Symbol("object");

/** Whether `v` is plain data all the way down (what a snapshot can vouch for). */
function plain(v) {
  if (v === null || typeof v !== "object") return typeof v !== "function";
  if (typeof v.toJSON === "function") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === Array.prototype || proto === null;
}

/** The snapshot of a message: its structure and leaves in visiting order, or null. */
function snapshot(v) {
  const out = [];
  const walk = (x) => {
    if (!plain(x)) return false;
    if (x === null || typeof x !== "object") {
      out.push(x);
      return true;
    }
    if (Array.isArray(x)) {
      out.push(ARRAY, x.length);
      for (let i = 0; i < x.length; i++) if (!walk(x[i])) return false;
      return true;
    }
    const at = out.length;
    out.push(OBJECT, 0);
    let keys = 0;
    for (const k in x) {
      out.push(k);
      keys++;
      if (!walk(x[k])) return false;
    }
    out[at + 1] = keys;
    return true;
  };
  return typeof v === "object" && v !== null && walk(v) ? out : null;
}

/** Whether `v` still matches `snap`. With `adopt`, the snapshot takes `v`'s equal strings, so
 * it holds the latest object's strings rather than keeping an older copy alive. */
function matches(v, snap, adopt = false) {
  let k = 0;
  const walk = (x) => {
    if (x === null || typeof x !== "object") {
      if (snap[k] !== x) return false;
      if (adopt) snap[k] = x;
      k++;
      return true;
    }
    if (Array.isArray(x)) {
      if (snap[k++] !== ARRAY || snap[k++] !== x.length) return false;
      for (let i = 0; i < x.length; i++) if (!walk(x[i])) return false;
      return true;
    }
    if (snap[k++] !== OBJECT) return false;
    const keys = snap[k++];
    let seen = 0;
    for (const key in x) {
      if (++seen > keys || snap[k++] !== key || !walk(x[key])) return false;
    }
    return seen === keys;
  };
  return walk(v) && k === snap.length;
}

/** The next message id. One counter for the whole process: an engine that serves requests of
 * several formats (a new `MessageIds` each) never sees one id name two messages. */
let nextId = 1;

/** How many of a request's newest messages are checked before it is built. */
export const CHECKED_NEWEST = 64;

/**
 * The ids of one engine's cached requests. `request(messages, all)` gives the ids, the fresh
 * flags and the texts to send; after the engine accepted them, `accepted(req, rewrite)` records
 * that it knows them (it knows only the ids of the last accepted request) and which came back
 * edited; `check()` checks the messages the request took unchanged unchecked (it runs by itself
 * when the event loop is idle, and before the next request).
 */
export class MessageIds {
  #entries = new WeakMap();
  /** Entries by the host's key (with `keyOf`), for the new objects of an unchanged message. */
  #byKey = new Map();
  #keyOf;
  #requests = 0;
  #generation = 0;
  /** The latest accepted request's messages taken as unchanged without a check: their places
   * (`at`) in its messages and entries, and which were new objects of a known message. */
  #unchecked = null;
  #checkQueued = false;
  /** The latest accepted request's messages and their entries, by place. */
  #last = null;
  /** Messages serialised by the latest `request()` calls, in total (for tests and the bench). */
  serialised = 0;
  /** Messages found changed by a check after their request (for tests and the bench). */
  changedLate = 0;

  /** `keyOf(message)`: the host's own name for a message (a string, or undefined for none),
   * for hosts that pass new objects for unchanged messages. */
  constructor({ keyOf } = {}) {
    this.#keyOf = keyOf;
  }

  /** What to send for `messages`; with `all`, every text. Throws what JSON.stringify throws. */
  request(messages, all = false) {
    this.check();
    const n = messages.length;
    const ids = new Uint32Array(n);
    const fresh = new Uint8Array(n);
    const texts = [];
    const entries = new Array(n);
    const keys = this.#keyOf ? new Array(n) : null;
    const unchecked = new Uint32Array(n); // places of the messages taken unchecked
    let u = 0;
    const copies = keys ? new Uint8Array(n) : null; // 1: a new object of a known message
    const request = ++this.#requests;
    const newest = n - CHECKED_NEWEST;
    const last = this.#last;
    for (let i = 0; i < n; i++) {
      const m = messages[i];
      const obj = typeof m === "object" && m !== null;
      // The same object at the same place as in the latest request: its entry without a lookup.
      let e = last && i < last.messages.length && last.messages[i] === m ? last.entries[i] : null;
      if (!e) e = obj ? this.#entries.get(m) : undefined;
      let same = true; // the entry was made for this very object
      if (!e && keys && obj) {
        // A new object: the host's key names the message it may be an unchanged copy of.
        const key = this.#key(m);
        keys[i] = key;
        // The key at the same place as in the latest request: its entry without hashing it.
        if (key !== undefined) e = last?.keys?.[i] === key ? last.entries[i] : this.#byKey.get(key);
        same = false;
      }
      // Two messages of one request never share an id (a host key given twice).
      if (e && (e.dead || !e.snap || e.request === request)) e = undefined;
      const now = i >= newest || (e && e.edited);
      if (e && now && !matches(m, e.snap, !same)) e = undefined; // changed: a new message
      if (!e || e.generation !== this.#generation || all) {
        // JSON.stringify of an array writes what is not JSON (undefined, a function) as null.
        texts.push(JSON.stringify(m) ?? "null");
        this.serialised++;
        fresh[i] = 1;
        if (!e) e = this.#entry(m);
        else if (!now) e.snap = snapshot(m); // the text sent is the object as it is now
      } else if (!now) {
        unchecked[u++] = i;
        if (copies) copies[i] = same ? 0 : 1;
      }
      ids[i] = e.id;
      entries[i] = e;
      e.request = request;
    }
    return {
      ids,
      fresh,
      texts: `[${texts.join(",")}]`,
      messages,
      entries,
      keys,
      unchecked: unchecked.subarray(0, u),
      copies,
    };
  }

  /** A new entry for `m`. */
  #entry(m) {
    const snap = snapshot(m);
    // Every field from the start: entries keep one shape, so reading them stays fast.
    return {
      id: nextId++,
      snap,
      generation: -1,
      message: snap ? m : null,
      request: 0,
      edited: false,
      dead: false,
    };
  }

  /** The host's key of `m`, or undefined when it has none (or `keyOf` throws). */
  #key(m) {
    try {
      const k = this.#keyOf(m);
      return typeof k === "string" ? k : undefined;
    } catch {
      return undefined;
    }
  }

  /** Records that the engine accepted `req` (from `request()`) and answered with `rewrite`
   * (its pieces: the messages it sent back edited are checked before every request). */
  accepted(req, rewrite = []) {
    const generation = ++this.#generation;
    const { entries, keys } = req;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      e.generation = generation;
      e.edited = false;
      if (e.message) {
        this.#entries.set(e.message, e);
        e.message = null;
        // Keyed by the host's key of the object it was found or made for.
        const key = keys?.[i];
        if (key !== undefined && e.snap) this.#byKey.set(key, e);
      }
    }
    for (const piece of rewrite)
      if (!Array.isArray(piece)) for (const i of piece.from) req.entries[i].edited = true;
    // Keys of messages no longer sent are dropped once they outnumber the ones sent.
    if (keys && this.#byKey.size > 2 * entries.length + 64) {
      const live = new Set(entries);
      for (const [k, e] of this.#byKey) if (!live.has(e)) this.#byKey.delete(k);
    }
    // A copy: the host may change its array after the request.
    const messages = req.messages.slice();
    this.#last = { messages, entries, keys };
    this.#unchecked = { at: req.unchecked, messages, entries, copies: req.copies };
    if (req.unchecked.length && !this.#checkQueued) {
      this.#checkQueued = true;
      const t = setImmediate(() => this.check());
      t.unref?.();
    }
  }

  /** Checks the messages the latest request took as unchanged without a check: one that has
   * changed loses its id, so the next request sends it again. Returns how many had changed. */
  check() {
    this.#checkQueued = false;
    const u = this.#unchecked;
    this.#unchecked = null;
    let changed = 0;
    for (const i of u?.at ?? []) {
      const [m, e] = [u.messages[i], u.entries[i]];
      if (e.dead || matches(m, e.snap, u.copies?.[i] === 1)) continue;
      e.dead = true;
      changed++;
      this.#entries.delete(m);
    }
    this.changedLate += changed;
    return changed;
  }
}
