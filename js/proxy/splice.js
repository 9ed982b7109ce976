// The rewritten message list spliced into the body the client sent: every byte outside the list
// goes upstream exactly as it came (numbers such as 1.50 or integers above 2^53, escapes,
// whitespace, key order), so nothing but the list can change what the provider caches or reads.
// jsonc-parser (Microsoft's, what VS Code uses) scans the body for the list's offsets without
// building a tree of it.
import { visit } from "jsonc-parser";

/** Offsets `[start, end)` in `text` of the value of the top-level array `field` (the last of
 * duplicate keys, as `JSON.parse` reads it), or null. */
function listSpan(text, field) {
  let depth = 0;
  let topObject = null;
  let key = null;
  let start = -1;
  let span = null;
  const open = (isObject) => (offset) => {
    if (depth === 0) topObject ??= isObject;
    if (depth === 1 && !isObject && key === field) start = offset;
    depth++;
  };
  const close = (offset, length) => {
    depth--;
    if (depth === 1 && start >= 0) {
      span = [start, offset + length];
      start = -1;
    }
  };
  visit(
    text,
    {
      onObjectBegin: open(true),
      onArrayBegin: open(false),
      onObjectEnd: close,
      onArrayEnd: close,
      onObjectProperty: (name) => {
        if (depth === 1) key = name;
      },
      onLiteralValue: () => {
        if (depth === 1 && key === field) span = null; // a later non-array value wins
      },
    },
    { disallowComments: true },
  );
  return topObject ? span : null;
}

/**
 * The body with the top-level array `field` replaced by `list` serialised as JSON; null when the
 * body has no such array (the caller then serialises the whole body). `text` is the body's text;
 * when `exact` (`text` is exactly `bytes`, valid UTF-8) the splice is made on `bytes`, else on
 * the text.
 */
export function spliceList(bytes, text, exact, field, list) {
  const span = listSpan(text, field);
  if (!span) return null;
  const json = Buffer.from(JSON.stringify(list), "utf8");
  const src = exact ? bytes : Buffer.from(text, "utf8");
  const start = Buffer.byteLength(text.slice(0, span[0]), "utf8");
  const end = start + Buffer.byteLength(text.slice(span[0], span[1]), "utf8");
  return Buffer.concat([src.subarray(0, start), json, src.subarray(end)]);
}
