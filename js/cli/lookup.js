// `smarter-compact search|sql|get <session> …`: the recall tools for a person, with the same
// text the model gets.
import { resolveStateDir } from "../config.js";
import { expectPositional, positiveInt, UsageError } from "./args.js";
import { withSession } from "./sessions.js";

/** `search <session> <query…> [--limit N] [--scope trimmed|all] [--mode auto|fts|hybrid]`. */
export async function searchCommand({ positional, flags }, out) {
  if (positional.length < 2)
    throw new UsageError(
      "search: usage: search <session> <query> [--limit N] [--scope trimmed|all]",
    );
  const [session, ...words] = positional;
  const limit = positiveInt(flags.limit, "--limit") ?? 8;
  const scope = flags.scope ?? "trimmed";
  if (scope !== "trimmed" && scope !== "all")
    throw new UsageError(`--scope must be "trimmed" or "all", got ${JSON.stringify(scope)}`);
  const res = await withSession(resolveStateDir(flags.stateDir), session, (c) =>
    c.search(words.join(" "), { limit, scope, mode: flags.mode ?? "auto" }),
  );
  out(flags.json ? JSON.stringify(res, null, 2) : res.text);
  return 0;
}

/** `sql <session> <statement…>`. */
export async function sqlCommand({ positional, flags }, out) {
  if (positional.length < 2) throw new UsageError('sql: usage: sql <session> "<SELECT …>"');
  const [session, ...parts] = positional;
  const res = await withSession(resolveStateDir(flags.stateDir), session, (c) =>
    c.sql(parts.join(" ")),
  );
  out(flags.json ? JSON.stringify(res, null, 2) : res.text);
  return 0;
}

/** `get <session> <id> [--start N] [--end N] [--grep TEXT]`. */
export async function getCommand({ positional, flags }, out) {
  const [session, id] = expectPositional(positional, ["session", "id"], "get");
  const start_line = positiveInt(flags.start, "--start");
  const end_line = positiveInt(flags.end, "--end");
  const res = await withSession(resolveStateDir(flags.stateDir), session, (c) =>
    c.get(id, { start_line, end_line, grep: flags.grep }),
  );
  out(flags.json ? JSON.stringify(res, null, 2) : res.text);
  return 0;
}
