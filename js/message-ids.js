// Message ids for the engine's cached requests (`Engine.transformCached`): a message object the
// host passes again, unchanged, keeps its id and is not serialised again. "Unchanged" is checked
// on every request by walking the object against a snapshot of what JSON.stringify would see
// (keys, lengths and leaf values, compared with ===: strings by reference first), which costs a
// walk of the object's fields, not a copy of its bytes. Objects JSON.stringify would not read as
// plain data (a toJSON method, a prototype other than Object's or Array's) always go as text.

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

/** Whether `v` still matches `snap`. */
function matches(v, snap) {
  let k = 0;
  const walk = (x) => {
    if (x === null || typeof x !== "object") return snap[k++] === x;
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

/**
 * The ids of one engine's cached requests. `request(messages, all)` gives the ids, the fresh
 * flags and the texts to send; after the engine accepted them, `accepted(req)` records that it
 * knows them (it knows only the ids of the last accepted request).
 */
export class MessageIds {
  #entries = new WeakMap();
  #next = 1;
  #generation = 0;
  /** Messages serialised by the latest `request()` calls, in total (for tests and the bench). */
  serialised = 0;

  /** What to send for `messages`; with `all`, every text. Throws what JSON.stringify throws. */
  request(messages, all = false) {
    const n = messages.length;
    const ids = new Uint32Array(n);
    const fresh = new Uint8Array(n);
    const texts = [];
    const entries = new Array(n);
    for (let i = 0; i < n; i++) {
      const m = messages[i];
      let e = typeof m === "object" && m !== null ? this.#entries.get(m) : undefined;
      if (e && !matches(m, e.snap)) e = undefined; // changed in place: a new message
      if (!e || e.generation !== this.#generation || all) {
        // JSON.stringify of an array writes what is not JSON (undefined, a function) as null.
        texts.push(JSON.stringify(m) ?? "null");
        this.serialised++;
        fresh[i] = 1;
        if (!e) {
          const snap = snapshot(m);
          e = { id: this.#next++, snap, generation: -1, message: snap ? m : null };
        }
      }
      ids[i] = e.id;
      entries[i] = e;
    }
    return { ids, fresh, texts: `[${texts.join(",")}]`, entries };
  }

  /** Records that the engine accepted `req` (from `request()`). */
  accepted(req) {
    this.#generation++;
    for (const e of req.entries) {
      e.generation = this.#generation;
      if (e.message) {
        this.#entries.set(e.message, e);
        e.message = null;
      }
    }
  }
}
