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
  return typeof v === "object" && v !== null && walk(v) ? out.slice() : null;
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
 * flags and the messages whose texts to send (`send`); after the engine accepted them, `accepted(req, rewrite)` records
 * that it knows them (it knows only the ids of the last accepted request) and which came back
 * edited; `check()` checks the messages the request took unchanged unchecked (it runs by itself
 * when the event loop is idle, and before the next request).
 *
 * Where a request begins with the latest accepted request's messages (its very objects, or new
 * objects under its keys at the same places), that run is taken whole: its ids are copied and
 * its entries are not visited (a visit of every entry is most of the cost of a long history).
 * Only the places the engine edited, the check found changed or that hold what cannot be
 * snapshot, and the newest messages, are visited one by one.
 */
export class MessageIds {
  #entries = new WeakMap();
  /** Entries by the host's key (with `keyOf`), for the new objects of an unchanged message. */
  #byKey = new Map();
  #keyOf;
  #requests = 0;
  /** The latest accepted request's messages taken as unchanged without a check: their places
   * (`at`) in its messages and entries, and which were new objects of a known message. */
  #unchecked = null;
  #checkQueued = false;
  /** The latest accepted request: its messages, entries, keys and ids by place, and the places
   * a request must visit even where it holds the same object (`visit`, a set). An entry is in
   * it when `entries[e.place] === e`. */
  #last = null;
  /** The entries the latest accepted request got back edited. */
  #edited = [];
  /** Messages serialised by the latest `request()` calls, in total (for tests and the bench). */
  serialised = 0;
  /** Messages found changed by a check after their request (for tests and the bench). */
  changedLate = 0;

  /** `keyOf(message)`: the host's own name for a message (a string, or undefined for none),
   * for hosts that pass new objects for unchanged messages. */
  constructor({ keyOf } = {}) {
    this.#keyOf = keyOf;
  }

  /** What to send for `messages`; with `all`, every text. */
  request(messages, all = false) {
    this.check();
    const n = messages.length;
    const ids = new Uint32Array(n);
    const fresh = new Uint8Array(n);
    const send = []; // the messages whose texts go, in order of places
    const keys = this.#keyOf ? new Array(n) : null;
    const copies = keys ? new Uint8Array(n) : null; // 1: a new object of a known message
    const request = ++this.#requests;
    const newest = n - CHECKED_NEWEST;
    const last = this.#last;
    // The run of the latest request's messages the request begins with, short of the newest:
    // the same objects, or (with `keyOf`) new objects under the same keys at the same places.
    let run = 0;
    if (last && !all) {
      const lim = Math.min(last.messages.length, newest);
      for (; run < lim; run++) {
        const m = messages[run];
        if (m === last.messages[run]) {
          if (keys) keys[run] = last.keys[run];
          continue;
        }
        // A new object under the key the latest request had at this place: its copy.
        if (!keys || typeof m !== "object" || m === null) break;
        const key = this.#key(m);
        if (key === undefined || key !== last.keys[run]) break;
        keys[run] = key;
        copies[run] = 1;
      }
    }
    // Filled in order of places (the visited places of the run are overwritten): a packed array.
    const entries = run ? last.entries.slice(0, run) : [];
    if (run) ids.set(last.ids.subarray(0, run));
    const visit = [];
    for (const i of last?.visit ?? []) if (i < run) visit.push(i);
    visit.sort((a, b) => a - b);
    // Places after the run of the messages taken unchecked (the run's are, but for `visit`).
    const unchecked = new Uint32Array(Math.max(0, n - run));
    let u = 0;
    /** Whether entry `e` stands at a place of the run that is not visited. */
    const inRun = (e) => e.place < run && last.entries[e.place] === e && !last.visit.has(e.place);
    /** Whether the engine knows entry `e` (it was in the latest accepted request). */
    const known = (e) => last !== null && last.entries[e.place] === e;
    const one = (i) => {
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
      if (e && (e.dead || !e.snap || e.request === request || (e.place !== i && inRun(e))))
        e = undefined;
      const now = i >= newest || (e && e.edited);
      if (e && now && !matches(m, e.snap, !same)) e = undefined; // changed: a new message
      if (!e || !known(e) || all) {
        send.push(m);
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
    };
    // Texts go in the order of their places: the visited places of the run, then the rest.
    for (const i of visit) one(i);
    for (let i = run; i < n; i++) one(i);
    return {
      ids,
      fresh,
      send,
      messages,
      entries,
      keys,
      unchecked: unchecked.subarray(0, u),
      copies,
      visit,
      run,
    };
  }

  /** A new entry for `m`. */
  #entry(m) {
    const snap = snapshot(m);
    // Every field from the start: entries keep one shape, so reading them stays fast.
    return {
      id: nextId++,
      snap,
      place: -1,
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
    const { entries, keys } = req;
    const visit = new Set();
    // Only the places the request visited hold entries that may be new or moved: those it
    // visited in the run it took whole, and every place after that run.
    const record = (i) => {
      const e = entries[i];
      e.place = i;
      if (!e.snap) visit.add(i);
      if (e.message) {
        this.#entries.set(e.message, e);
        e.message = null;
        // Keyed by the host's key of the object it was found or made for.
        const key = keys?.[i];
        if (key !== undefined && e.snap) this.#byKey.set(key, e);
      }
    };
    for (const i of req.visit) record(i);
    for (let i = req.run; i < entries.length; i++) record(i);
    for (const e of this.#edited) e.edited = false;
    this.#edited = [];
    for (const piece of rewrite)
      if (!Array.isArray(piece))
        for (const i of piece.from) {
          entries[i].edited = true;
          this.#edited.push(entries[i]);
          visit.add(i);
        }
    // Keys of messages no longer sent are dropped once they outnumber the ones sent.
    if (keys && this.#byKey.size > 2 * entries.length + 64) {
      const live = new Set(entries);
      for (const [k, e] of this.#byKey) if (!live.has(e)) this.#byKey.delete(k);
    }
    // A copy: the host may change its array after the request.
    const messages = req.messages.slice();
    this.#last = { messages, entries, keys, ids: req.ids, visit };
    this.#unchecked = {
      run: req.run,
      visit: req.visit,
      at: req.unchecked,
      last: this.#last,
      copies: req.copies,
    };
    if ((req.run || req.unchecked.length) && !this.#checkQueued) {
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
    if (!u) return 0;
    let changed = 0;
    const one = (i) => {
      const [m, e] = [u.last.messages[i], u.last.entries[i]];
      if (e.dead || matches(m, e.snap, u.copies?.[i] === 1)) return;
      e.dead = true;
      changed++;
      this.#entries.delete(m);
      // The next request visits the place (it may hold the same object).
      u.last.visit.add(i);
    };
    // The run the request took whole, but for the places it visited (`visit`, in order).
    for (let i = 0, v = 0; i < u.run; i++) {
      if (v < u.visit.length && u.visit[v] === i) v++;
      else one(i);
    }
    for (const i of u.at) one(i);
    this.changedLate += changed;
    return changed;
  }
}
