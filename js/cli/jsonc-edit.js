// Adds or removes one entry of an array property in a JSON-with-comments file, as a minimal text
// edit: comments, formatting and every other byte stay as they are, and removing an entry that
// was added restores the file byte for byte. jsonc-parser (Microsoft's, what VS Code uses)
// parses the text into a tree with offsets; the edits are computed here and applied with its
// applyEdits, because its `modify` re-formats the whole array (or, without formatting options,
// leaves a stray quote on removal), which is not reversible.
import {
  applyEdits,
  createScanner,
  findNodeAtLocation,
  parseTree,
  printParseErrorCode,
  SyntaxKind,
} from "jsonc-parser";
import { codedError } from "../errors.js";

const end = (n) => n.offset + n.length;
const BOM = "\uFEFF";
const withBom = (r) => ({ ...r, text: BOM + r.text });

/** Line ending of a text ("\r\n" if it has one). */
export function eolOf(text) {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

/** The first indentation found in the text (one level), else two spaces. */
function indentUnit(text) {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? m[1] : "  ";
}

/** Leading whitespace of the line holding `offset`. */
function lineIndent(text, offset) {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))[0];
}

/** Offset of the first token after `from` if it is a comma (comments and whitespace skipped), else -1. */
function commaAfter(text, from) {
  const s = createScanner(text.slice(from), false);
  for (;;) {
    const t = s.scan();
    if (
      t === SyntaxKind.LineCommentTrivia ||
      t === SyntaxKind.BlockCommentTrivia ||
      t === SyntaxKind.LineBreakTrivia ||
      t === SyntaxKind.Trivia
    )
      continue;
    return t === SyntaxKind.CommaToken ? from + s.getTokenOffset() : -1;
  }
}

/** Parses a JSONC document whose root is an object; a coded E_CONFIG error otherwise. */
export function parseObject(text, file) {
  const errors = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const { error, offset } = errors[0];
    const line = text.slice(0, offset).split("\n").length;
    throw codedError(
      "E_CONFIG",
      `${file}: not valid JSON (${printParseErrorCode(error)} at line ${line}); left unchanged`,
    );
  }
  if (!root || root.type !== "object")
    throw codedError("E_CONFIG", `${file}: the top level is not an object; left unchanged`);
  return root;
}

/** The array at `key` (null when the key is missing); E_CONFIG when it is not an array. */
export function arrayAt(root, key, file) {
  const node = findNodeAtLocation(root, [key]);
  if (!node) return null;
  if (node.type !== "array")
    throw codedError("E_CONFIG", `${file}: "${key}" is not an array; left unchanged`);
  return node;
}

/** The edit that removes child `index` of an array or object node (a property node for objects). */
function removalEdit(text, container, index) {
  const kids = container.children;
  const node = kids[index];
  if (index > 0) {
    const prevEnd = end(kids[index - 1]);
    const c = commaAfter(text, prevEnd);
    // Our own insertion is `,` right after the previous entry, then whitespace: remove exactly that.
    if (c === prevEnd && /^\s*$/.test(text.slice(c + 1, node.offset)))
      return { offset: prevEnd, length: end(node) - prevEnd, content: "" };
    return { offset: c, length: end(node) - c, content: "" };
  }
  const c = commaAfter(text, end(node));
  if (c >= 0) {
    let stop = c + 1;
    while (stop < text.length && /[ \t\r\n]/.test(text[stop])) stop++;
    if (kids.length === 1) stop = c + 1; // a trailing comma after the only entry
    return { offset: node.offset, length: stop - node.offset, content: "" };
  }
  // The only entry: with the whitespace before it when nothing else is there (how it was added).
  const open = container.offset + 1;
  const start = /^\s*$/.test(text.slice(open, node.offset)) ? open : node.offset;
  return { offset: start, length: end(node) - start, content: "" };
}

/** Collapses a container left with only whitespace inside to `[]` / `{}`. */
function collapseIfEmpty(text, path) {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const node = path.length ? findNodeAtLocation(root, path) : root;
  if (!node || node.children?.length) return text;
  const inner = text.slice(node.offset + 1, end(node) - 1);
  return /^\s*$/.test(inner) && inner
    ? applyEdits(text, [{ offset: node.offset + 1, length: inner.length, content: "" }])
    : text;
}

/**
 * Appends `value` to the array `key` of the document, creating the key if needed, unless an
 * entry already satisfies `matches(node)`. Returns `{ text, changed }`.
 */
export function addEntry(text, key, value, matches, file) {
  if (text.startsWith(BOM)) return withBom(addEntry(text.slice(1), key, value, matches, file));
  const json = JSON.stringify(value);
  const eol = eolOf(text);
  if (!text.trim())
    return { text: `{${eol}${"  "}${JSON.stringify(key)}: [${json}]${eol}}${eol}`, changed: true };
  const root = parseObject(text, file);
  const arr = arrayAt(root, key, file);
  if (arr?.children.some(matches)) return { text, changed: false };
  let edit;
  if (arr && arr.children.length) {
    const last = arr.children.at(-1);
    const multiline = text.slice(arr.offset, arr.children[0].offset).includes("\n");
    edit = {
      offset: end(last),
      length: 0,
      content: multiline ? `,${eol}${lineIndent(text, last.offset)}${json}` : `, ${json}`,
    };
  } else if (arr) {
    // Into an existing empty array: spaced, `[ "v" ]`, which tells removeEntry to keep the
    // array (a key that was added holds `["v"]` and goes away with the entry).
    edit = { offset: arr.offset + 1, length: 0, content: ` ${json} ` };
  } else {
    const prop = `${JSON.stringify(key)}: [${json}]`;
    const props = root.children;
    if (props.length) {
      const last = props.at(-1);
      const multiline = text.slice(root.offset, props[0].offset).includes("\n");
      edit = {
        offset: end(last),
        length: 0,
        content: multiline ? `,${eol}${lineIndent(text, last.offset)}${prop}` : `, ${prop}`,
      };
    } else {
      const inner = text.slice(root.offset + 1, end(root) - 1);
      edit = {
        offset: root.offset + 1,
        length: 0,
        content: `${eol}${indentUnit(text)}${prop}${inner ? "" : eol}`,
      };
    }
  }
  return { text: applyEdits(text, [edit]), changed: true };
}

/**
 * Removes every entry of the array `key` that satisfies `matches(node)`. An array left empty is
 * removed with its key (the inverse of `addEntry` on a file without the key), unless its only
 * entry was written `[ "v" ]` (how `addEntry` fills an existing empty array): then `[]` stays.
 * Returns `{ text, changed }`.
 */
export function removeEntry(text, key, matches, file) {
  if (text.startsWith(BOM)) return withBom(removeEntry(text.slice(1), key, matches, file));
  if (!text.trim()) return { text, changed: false };
  let changed = false;
  for (;;) {
    const root = parseObject(text, file);
    const arr = arrayAt(root, key, file);
    const index = arr ? arr.children.findIndex(matches) : -1;
    if (index < 0) return { text, changed };
    changed = true;
    const node = arr.children[index];
    if (arr.children.length === 1 && text[node.offset - 1] === " " && text[end(node)] === " ") {
      text = applyEdits(text, [{ offset: node.offset - 1, length: node.length + 2, content: "" }]);
    } else if (arr.children.length === 1) {
      const propIndex = root.children.indexOf(arr.parent);
      text = collapseIfEmpty(applyEdits(text, [removalEdit(text, root, propIndex)]), []);
    } else {
      text = applyEdits(text, [removalEdit(text, arr, index)]);
    }
  }
}
