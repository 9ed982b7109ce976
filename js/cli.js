#!/usr/bin/env node
// The smarter-compact command line.
import { runDemo } from "./demo.js";

const USAGE = `usage: smarter-compact <command>
  demo [--trim-at N] [--session FILE]   replay a real session and show each request before/after`;

async function main(argv) {
  const [cmd, ...rest] = argv;
  const flag = (name) => {
    const i = rest.indexOf(name);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  switch (cmd) {
    case "demo": {
      const trimAt = flag("--trim-at") ? Number(flag("--trim-at")) : undefined;
      await runDemo({ trimAt, file: flag("--session") });
      return 0;
    }
    default:
      console.error(USAGE);
      return cmd === undefined || cmd === "help" || cmd === "--help" ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`smarter-compact: ${e.code ? `${e.code}: ` : ""}${e.message}`);
    process.exit(1);
  },
);
