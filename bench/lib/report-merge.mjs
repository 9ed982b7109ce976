// Merging one phase's section into an existing REPORT.md and mechanism-tables.md, for a phase run
// alone (`node bench/run.mjs --only=idle`, `--only=continuity`): the section sits between two
// HTML-comment markers, the merge replaces what lies between them and leaves the rest as it was.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** `text` with `section` (which starts with `begin` and ends with `end`) put in: between the
 * markers if there, else before the line `before` (a heading), else at the end. */
export function spliceSection(text, section, { begin, end, before = null }) {
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a >= 0 && b > a) return text.slice(0, a) + section + text.slice(b + end.length);
  const at = before ? text.indexOf(`\n${before}`) : -1;
  if (at >= 0) return `${text.slice(0, at + 1)}${section}\n\n${text.slice(at + 1)}`;
  return `${text.trimEnd()}\n\n${section}\n`;
}

/** Puts a phase's sections into the REPORT.md and `tablesFile` of `reportDir`. `report` and
 * `tables`: `{section, before}` for each file; `header(report, hash, previous)` rewrites
 * REPORT.md's lines that state the tables' hash and its contents. Returns the tables' path, new
 * hash and the hash before. */
export function mergeSection({ reportDir, tablesFile, sha256, markers, report, tables, header }) {
  const tablesPath = join(reportDir, tablesFile);
  const reportPath = join(reportDir, "REPORT.md");
  if (!existsSync(tablesPath) || !existsSync(reportPath))
    throw new Error(`no ${tablesFile} or REPORT.md in ${reportDir} to merge the phase into`);
  const before = readFileSync(tablesPath, "utf8");
  const merged = spliceSection(before, tables.section, { ...markers, before: tables.before });
  writeFileSync(tablesPath, merged.endsWith("\n") ? merged : `${merged}\n`);
  const hash = sha256(readFileSync(tablesPath, "utf8"));
  const previous = sha256(before);
  const text = spliceSection(readFileSync(reportPath, "utf8"), report.section, {
    ...markers,
    before: report.before,
  });
  writeFileSync(reportPath, header(text, hash, previous));
  return { tables: tablesPath, hash, previous };
}

/** The section of `text` that starts at the line `start`: up to the line `end` (a marker) and
 * with it, or, without `end`, up to the next `## ` heading or phase marker. Null when `text` has
 * no such line. (A report rebuilt without a phase's results keeps that phase's old section.) */
export function sectionOf(text, start, end = null) {
  const lines = text.split("\n");
  const a = lines.indexOf(start);
  if (a < 0) return null;
  let b = a + 1;
  if (end) {
    while (b < lines.length && lines[b] !== end) b++;
    if (b === lines.length) return null;
    b++;
  } else while (b < lines.length && !/^(## |<!-- .* phase: begin -->$)/.test(lines[b])) b++;
  return lines.slice(a, b).join("\n").trimEnd();
}
