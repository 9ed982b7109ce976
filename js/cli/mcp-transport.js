// The MCP server's stdio transport: newline-delimited JSON-RPC on stdin/stdout, like the SDK's
// StdioServerTransport, except that a bad line never ends the session. A line that is not JSON
// is answered with -32700 (parse error), one that is not a JSON-RPC message with -32600, and a
// line over MAX_LINE_BYTES is skipped as it streams in (never buffered whole) and answered with
// -32600; the server keeps serving the next lines.

/** Longest line accepted (the SDK's own limit). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Bytes kept of each end of an oversized line, to recover its id. */
const ID_WINDOW = 4096;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * The id of an oversized request, when it can be read from the line's first or last bytes
 * (`{"jsonrpc":"2.0","id":7,…` or `…,"id":7}`, the orders clients write); null otherwise, as
 * JSON-RPC says an undeterminable id is.
 */
export function salvageId(head, tail) {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.){0,200}")`;
  const m =
    new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}`).exec(
      head,
    ) ?? new RegExp(String.raw`[,{]\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  if (!m) return null;
  try {
    return JSON.parse(m[1]);
  } catch {
    return null;
  }
}

const errorReply = (id, code, message) => ({ jsonrpc: "2.0", id, error: { code, message } });

/** A JSON-RPC message's basic shape (the SDK's schemas check the rest). */
function isMessage(v) {
  return (
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    v.jsonrpc === "2.0" &&
    (typeof v.method === "string" || "result" in v || "error" in v)
  );
}

/** A Transport (the SDK's interface) over a readable and a writable stream. */
export class LineTransport {
  constructor(
    stdin = process.stdin,
    stdout = process.stdout,
    { maxLineBytes = MAX_LINE_BYTES } = {},
  ) {
    this.stdin = stdin;
    this.stdout = stdout;
    this.max = maxLineBytes;
    this.parts = []; // the current line so far
    this.size = 0;
    this.skipping = false; // inside an oversized line
    this.head = "";
    this.tail = "";
    this.onData = (chunk) => this.take(chunk);
    this.onError = (e) => this.onerror?.(e);
    this.onEnd = () => this.close();
  }

  async start() {
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onError);
    this.stdin.on("end", this.onEnd);
  }

  /** Splits a chunk into lines; keeps at most `max` bytes of the current one. */
  take(chunk) {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(0x0a, at);
      const piece = chunk.subarray(at, nl === -1 ? chunk.length : nl);
      at = nl === -1 ? chunk.length : nl + 1;
      this.append(piece);
      if (nl !== -1) this.endLine();
    }
  }

  append(piece) {
    if (this.skipping) {
      this.tail = (this.tail + piece.toString("latin1")).slice(-ID_WINDOW);
      return;
    }
    if (this.size + piece.length <= this.max) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    // Over the limit: keep only the ends, to answer with the request's id.
    const seen = Buffer.concat([...this.parts, piece]);
    this.head = seen.subarray(0, ID_WINDOW).toString("latin1");
    this.tail = seen.subarray(-ID_WINDOW).toString("latin1");
    this.parts = [];
    this.size = 0;
    this.skipping = true;
  }

  endLine() {
    if (this.skipping) {
      const id = salvageId(this.head, this.tail);
      this.skipping = false;
      this.head = this.tail = "";
      this.reply(
        errorReply(
          id,
          INVALID_REQUEST,
          `request too large: a message may have at most ${this.max} bytes; nothing of it was read`,
        ),
      );
      return;
    }
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      this.reply(errorReply(null, PARSE_ERROR, `parse error: ${e.message}`));
      return;
    }
    if (!isMessage(msg)) {
      const id = msg?.id;
      const ok = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
      this.reply(
        errorReply(
          ok ? id : null,
          INVALID_REQUEST,
          'invalid request: expected one object {"jsonrpc": "2.0", "id", "method", "params"}',
        ),
      );
      return;
    }
    try {
      this.onmessage?.(msg);
    } catch (e) {
      this.onerror?.(e);
    }
  }

  reply(message) {
    this.send(message).catch((e) => this.onerror?.(e));
  }

  send(message) {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  async close() {
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onError);
    this.stdin.off("end", this.onEnd);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.parts = [];
    const cb = this.onclose;
    this.onclose = undefined;
    cb?.();
  }
}
