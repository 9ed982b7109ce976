// The recall tools, with the same names, arguments and answers in every host and over MCP.
import { compactContext } from "./compact-context.js";
import { codedError } from "./errors.js";
import { engineModule } from "./wasm.js";

/** Tool definitions: name, description, JSON-schema parameters. */
export async function toolDefinitions() {
  const schema = (await engineModule()).schemaDoc();
  return [
    {
      name: "smart_compact_search",
      description:
        "Search this session's stored history: earlier turns that were trimmed out of your context, and the full text of tool outputs that were compressed. Use it before answering from anything you cannot see. Matches identifiers, paths and numbers exactly; returns message numbers, line numbers and a smart_compact_get call to read more.",
      parameters: {
        type: "object",
        properties: {
          query: {
            type: "string",
            description: "Words, identifiers, paths or numbers to look for.",
          },
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 50,
            default: 8,
            description: "Most hits to return.",
          },
          scope: {
            type: "string",
            enum: ["trimmed", "all"],
            default: "trimmed",
            description: "trimmed: what is not in your context; all: the whole session.",
          },
          mode: {
            type: "string",
            enum: ["auto", "fts", "hybrid"],
            default: "auto",
            description:
              "Ranking: auto (hybrid once embeddings exist, else full-text), fts (full-text only) or hybrid (embeds what is not embedded yet first; needs the model).",
          },
        },
        required: ["query"],
      },
    },
    {
      name: "smart_compact_sql",
      description: `Run one read-only SQL query (SQLite) on this session's store, e.g. to count or list things exactly. Results are capped at 200 rows and 16 kB; a query running over 5 s is stopped.\n${schema}`,
      parameters: {
        type: "object",
        properties: {
          sql: { type: "string", description: "One SELECT or WITH … SELECT statement." },
        },
        required: ["sql"],
      },
    },
    {
      name: "smart_compact_get",
      description:
        "Read the full text of a compressed tool output (by the id in its '[smarter-compact] output compressed' header or a search hit) or of a stored message (by its number), a page of up to 200 lines at a time; with grep, only the lines that contain the text, each with its line number.",
      parameters: {
        type: "object",
        properties: {
          id: { type: "string", description: "A blob id (16 hex characters) or a message number." },
          start_line: { type: "integer", minimum: 1, description: "First line (1-based)." },
          end_line: {
            type: "integer",
            minimum: 1,
            description: "Last line (at most 200 lines per page).",
          },
          grep: {
            type: "string",
            maxLength: 200,
            description:
              "Only the lines containing this text (case-insensitive; alternatives separated by |), with their numbers.",
          },
        },
        required: ["id"],
      },
    },
    {
      name: "compact_context",
      description:
        "Score conversation turns and keep the most useful ones up to target_ratio of their tokens (chitta's formula: role × (0.3·recency + 0.4·similarity to the query + 0.3·novelty against memories)); survivors come back verbatim in their original order, with stats.",
      parameters: {
        type: "object",
        properties: {
          messages: {
            type: "array",
            items: { type: "object" },
            description: "Conversation turns [{role, content}] in OpenAI or Claude format.",
          },
          query: {
            type: "string",
            description: "The upcoming task; biases the scoring towards what is needed next.",
          },
          target_ratio: {
            type: "number",
            minimum: 0.05,
            maximum: 1.0,
            default: 0.4,
            description: "Fraction of the tokens to keep.",
          },
          distill_novel: {
            type: "boolean",
            default: false,
            description:
              "Record capped excerpts of novel dropped turns in the memory bank (needs the embedder and a bank).",
          },
        },
        required: ["messages"],
      },
    },
    {
      name: "context_status",
      description:
        "Show smarter-compact's state for this session: thresholds in force, trims, compressed outputs, fail-opens, token savings.",
      parameters: { type: "object", properties: {} },
    },
  ];
}

/** Runs a tool for a model: returns the text of its answer; throws a coded Error for bad
 * arguments or a failed query (hosts turn that into a tool error result). */
export async function runTool(compactor, name, args = {}) {
  // compact_context needs no session; the others read this session's store.
  if (args === null || typeof args !== "object" || Array.isArray(args))
    throw codedError("E_ARG", "arguments must be an object");
  switch (name) {
    case "smart_compact_search":
      return (
        await compactor.search(args.query, {
          limit: args.limit ?? 8,
          scope: args.scope ?? "trimmed",
          mode: args.mode ?? "auto",
        })
      ).text;
    case "smart_compact_sql":
      return (await compactor.sql(args.sql)).text;
    case "smart_compact_get":
      return (
        await compactor.get(args.id, {
          start_line: args.start_line,
          end_line: args.end_line,
          grep: args.grep,
        })
      ).text;
    case "context_status":
      return (await compactor.status()).text;
    case "compact_context":
      return JSON.stringify(
        await compactContext(args, compactor ? await compactor.memoryContext() : {}),
      );
    default:
      throw codedError("E_ARG", `unknown tool ${JSON.stringify(name)}`);
  }
}
