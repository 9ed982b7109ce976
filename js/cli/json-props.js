// Adding and removing one property of a JSON(C) object as a text edit, so that everything else
// in the file (comments, formatting, other entries) stays byte for byte, and removing what was
// added gives the original text back.
import { findNodeAtLocation, parseTree } from "jsonc-parser";
import { codedError } from "../errors.js";

const eolOf = (text) => (text.includes("\r\n") ? "\r\n" : "\n");

/** The indentation of the line holding `offset`. */
function indentAt(text, offset) {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))[0];
}

/** One indentation step used by the file (two spaces when it shows none). */
function stepOf(text) {
  return /\n([ \t]+)"/.exec(text)?.[1] ?? "  ";
}

/** `value` as JSON indented to sit at `indent` (its nested lines one `step` deeper each). */
function render(value, indent, step, eol) {
  return JSON.stringify(value, null, step).split("\n").join(`${eol}${indent}`);
}

function treeOf(text, file) {
  const tree = parseTree(text);
  if (!tree || tree.type !== "object")
    throw codedError("E_CONFIG", `${file} is not a JSON object; left untouched`);
  return tree;
}

/** Sets `path` to `value` (creating the missing objects on the way); the property must not exist.
 * Returns the new text and how many objects on the path it created. */
export function addProperty(text, path, value, file) {
  const tree = treeOf(text, file);
  let parent = tree;
  let depth = 0;
  for (; depth < path.length - 1; depth++) {
    const next = findNodeAtLocation(tree, path.slice(0, depth + 1));
    if (!next) break;
    if (next.type !== "object")
      throw codedError(
        "E_CONFIG",
        `${file}: ${path.slice(0, depth + 1).join(".")} is not an object; left untouched`,
      );
    parent = next;
  }
  let rest = value;
  for (let i = path.length - 1; i > depth; i--) rest = { [path[i]]: rest };
  const key = path[depth];
  const eol = eolOf(text);
  const step = stepOf(text);
  const props = parent.children ?? [];
  if (props.length) {
    const last = props.at(-1);
    const indent = indentAt(text, last.offset);
    const insert = `,${eol}${indent}${JSON.stringify(key)}: ${render(rest, indent, step, eol)}`;
    const at = last.offset + last.length;
    return { text: text.slice(0, at) + insert + text.slice(at), created: path.length - 1 - depth };
  }
  const outer = indentAt(text, parent.offset);
  const inner = outer + step;
  const body = `{${eol}${inner}${JSON.stringify(key)}: ${render(rest, inner, step, eol)}${eol}${outer}}`;
  return {
    text: text.slice(0, parent.offset) + body + text.slice(parent.offset + parent.length),
    created: path.length - 1 - depth,
  };
}

/** Removes the property at `path`; also its parent objects that this leaves empty, up to
 * `created` of them (those `addProperty` created). */
export function removeProperty(text, path, file, created = 0) {
  const tree = treeOf(text, file);
  for (let len = path.length; len >= 1; len--) {
    const parent = len === 1 ? tree : findNodeAtLocation(tree, path.slice(0, len - 1));
    const props = parent?.children ?? [];
    const i = props.findIndex((p) => p.children?.[0]?.value === path[len - 1]);
    if (i < 0) return text;
    const others = props.length - 1;
    if (others === 0 && len > 1 && path.length - len < created) continue; // an emptied parent we created goes instead
    const prop = props[i];
    const [from, to] =
      i > 0
        ? [props[i - 1].offset + props[i - 1].length, prop.offset + prop.length]
        : others
          ? [prop.offset, props[1].offset]
          : [parent.offset + 1, parent.offset + parent.length - 1];
    return text.slice(0, from) + text.slice(to);
  }
  return text;
}
