// The rewritten message list spliced into the body the client sent: every byte outside the list
// goes upstream exactly as it came (numbers such as 1.50 or integers above 2^53, escapes,
// whitespace, key order), so nothing but the list can change what the provider caches or reads.
// jsonc-parser (Microsoft's, what VS Code uses) gives the list's offsets in the body text.
import { parseTree } from "jsonc-parser";

/**
 * `raw` (the body's bytes, `text` their decoded text) with the top-level array `field` replaced
 * by `list` serialised as JSON; null when the body has no such array (the caller then serialises
 * the whole body). The last of duplicate keys is the one replaced, as `JSON.parse` reads it.
 * When `text` is not exactly `raw` (a compressed body, or bytes that are not UTF-8), the splice is
 * made on the text.
 */
export function spliceList(raw, text, field, list) {
  const tree = parseTree(text, [], { disallowComments: true });
  if (tree?.type !== "object") return null;
  const node = tree.children?.filter((p) => p.children?.[0]?.value === field).at(-1)?.children?.[1];
  if (node?.type !== "array") return null;
  const json = Buffer.from(JSON.stringify(list), "utf8");
  const exact =
    raw && Buffer.byteLength(text, "utf8") === raw.length && raw.equals(Buffer.from(text, "utf8"));
  const bytes = exact ? raw : Buffer.from(text, "utf8");
  const start = Buffer.byteLength(text.slice(0, node.offset), "utf8");
  const end = start + Buffer.byteLength(text.slice(node.offset, node.offset + node.length), "utf8");
  return Buffer.concat([bytes.subarray(0, start), json, bytes.subarray(end)]);
}
