// Request bodies for the proxy: read once into one buffer, never past the cap, and decompressed
// with the same cap on the output, so a small compressed body cannot expand without bound.
import zlib from "node:zlib";

/** An error the proxy answers with `status` and the message as sent. */
export function httpError(status, message) {
  return Object.assign(new Error(message), { status });
}

/**
 * The bytes of request bodies the proxy holds at once, at most `total`: `take(n)` reserves
 * (false when that would pass the total), `give(n)` returns.
 */
export function bodyBudget(total) {
  let held = 0;
  return {
    take(n) {
      if (held + n > total) return false;
      held += n;
      return true;
    },
    give(n) {
      held -= n;
    },
    get held() {
      return held;
    },
  };
}

/**
 * The request's body as one Buffer, at most `max` bytes, reserved in `budget` as it is read
 * (`lease.bytes`: what to give back once the request is done, also when it failed). A declared
 * `content-length` over the cap is refused before a byte is read; a body without one is refused
 * as soon as it passes the cap (status 413); a body that would pass the budget of all bodies in
 * flight is refused with a 503. The reading stops there. A declared length is read into a buffer
 * of that size, so the body is held once.
 */
export function readBody(req, max, budget, lease) {
  return new Promise((resolve, reject) => {
    const declared = req.headers["content-length"];
    const length = declared === undefined ? null : Number(declared);
    if (length !== null && length > max) {
      reject(tooLarge(`the request body (${length} bytes) is over the proxy's limit`, max));
      return;
    }
    const busy = () =>
      httpError(
        503,
        "too many large request bodies at once (SMARTER_COMPACT_PROXY_MAX_BUFFERED); try again",
      );
    const buf = Number.isSafeInteger(length) && length >= 0 ? Buffer.allocUnsafe(length) : null;
    if (buf) {
      if (!budget.take(buf.length)) return reject(busy());
      lease.bytes += buf.length;
    }
    const chunks = [];
    let size = 0;
    const onData = (c) => {
      const over = size + c.length > (buf ? buf.length : max);
      const refused = over ? null : !buf && !budget.take(c.length);
      if (over || refused) {
        req.off("data", onData);
        req.pause();
        reject(over ? tooLarge("the request body is over the proxy's limit", max) : busy());
        return;
      }
      if (!buf) lease.bytes += c.length;
      if (buf) c.copy(buf, size);
      else chunks.push(c);
      size += c.length;
    };
    req.on("data", onData);
    req.on("end", () => resolve(buf ? buf.subarray(0, size) : Buffer.concat(chunks, size)));
    req.on("error", reject);
  });
}

function tooLarge(what, max) {
  return httpError(413, `${what} of ${max} bytes (SMARTER_COMPACT_PROXY_MAX_BODY)`);
}

const INFLATE = {
  gzip: zlib.gunzipSync,
  "x-gzip": zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
};
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The body as text: `{ bytes, text, exact }`, `bytes` the decompressed body and `exact` true when
 * `text` is exactly those bytes (valid UTF-8), so a splice can be made on `bytes`. Null when the
 * body cannot be read (an encoding Node lacks, e.g. zstd on Node 20, or corrupt data): it is then
 * forwarded as it came. Throws a 413 `httpError` when the decompressed body would pass `max`.
 */
export function decodeBody(raw, encoding, max) {
  const name = (encoding ?? "identity").trim().toLowerCase();
  let bytes = raw;
  if (name !== "identity" && name !== "") {
    const inflate = INFLATE[name];
    if (!inflate) return null;
    try {
      bytes = inflate(raw, { maxOutputLength: max });
    } catch (e) {
      if (e?.code === "ERR_BUFFER_TOO_LARGE")
        throw httpError(
          413,
          `the ${name} request body decompressed to over the proxy's limit of ${max} bytes (SMARTER_COMPACT_PROXY_MAX_BODY)`,
        );
      return null;
    }
  }
  try {
    return { bytes, text: utf8.decode(bytes), exact: true };
  } catch {
    return { bytes, text: bytes.toString("utf8"), exact: false };
  }
}

/**
 * Why a request must not reach a route, as an `httpError`, or null. A browser always sends
 * `Origin` on a cross-site POST and the real clients send none, so any Origin is refused (403);
 * a body that is not JSON (`text/plain`, a form: what a page can send without a CORS preflight)
 * is refused too (415).
 */
export function refusal(headers) {
  if (headers.origin !== undefined)
    return httpError(
      403,
      `requests from a browser (Origin: ${String(headers.origin).slice(0, 200)}) are refused`,
    );
  const type = String(headers["content-type"] ?? "")
    .split(";")[0]
    .trim()
    .toLowerCase();
  if (type !== "application/json" && !/^application\/[a-z0-9.+-]*\+json$/.test(type))
    return httpError(415, `the request body must be JSON (content-type: ${type || "none"})`);
  return null;
}
