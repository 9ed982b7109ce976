// Argument parsing for the command line: `--flag value`, `--flag=value`, boolean switches and
// positionals; a mistake is a UsageError (exit 2).

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
    this.code = "E_USAGE";
  }
}

/**
 * Parses `argv` against a spec `{ values: ["--limit", …], switches: ["--json", …] }`.
 * Returns `{ flags: {limit: "3", json: true}, positional: [...] }`; an unknown option, a value
 * missing or a switch given a value is a UsageError. `--` ends the options.
 */
export function parseArgs(argv, { values = [], switches = [] } = {}) {
  const flags = {};
  const positional = [];
  const key = (name) => name.replace(/^--/, "").replace(/-([a-z])/g, (_, c) => c.toUpperCase());
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith("--") || a === "-") {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (switches.includes(name)) {
      if (eq >= 0) throw new UsageError(`${name} takes no value`);
      flags[key(name)] = true;
    } else if (values.includes(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      flags[key(name)] = v;
    } else {
      throw new UsageError(`unknown option ${name}`);
    }
  }
  return { flags, positional };
}

/** Checks the number of positionals: exactly `names.length` (each named in the message). */
export function expectPositional(positional, names, command) {
  if (positional.length < names.length)
    throw new UsageError(
      `${command}: missing ${names
        .slice(positional.length)
        .map((n) => `<${n}>`)
        .join(" ")}`,
    );
  if (positional.length > names.length)
    throw new UsageError(
      `${command}: unexpected argument ${JSON.stringify(positional[names.length])}`,
    );
  return positional;
}

/** A positive integer flag or positional, else a UsageError. */
export function positiveInt(value, what) {
  if (value === undefined) return undefined;
  if (
    !/^[0-9]+$/.test(String(value)) ||
    Number(value) < 1 ||
    !Number.isSafeInteger(Number(value))
  ) {
    throw new UsageError(`${what} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}
