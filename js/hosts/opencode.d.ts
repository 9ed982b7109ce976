// Types of the OpenCode plugin (`smarter-compact/opencode`, also the package's default export).
import type { HostOptions } from "../index.js";

/** An OpenCode tool as the plugin registers it. */
export interface OpenCodeTool {
  description: string;
  /** JSON-schema properties of the arguments. */
  args: Record<string, Record<string, unknown>>;
  /** The tool's answer as text; a failure is answered as `smarter-compact error <code>: …`. */
  execute(args: Record<string, unknown>, ctx?: { sessionID?: string }): Promise<string>;
}

/** The hooks the plugin gives OpenCode. */
export interface OpenCodeHooks {
  tool: Record<string, OpenCodeTool>;
  /** Adds the `/smarter-compact:compact` command. */
  config(cfg: {
    command?: Record<string, { description: string; template: string }>;
  }): Promise<void>;
  /** Runs the manual trim when the command is used. */
  "command.execute.before"(input: { command?: string; sessionID?: string }): Promise<void>;
  /** Appends the standing instruction and measures the system prompt. */
  "experimental.chat.system.transform"(
    input: { sessionID?: string },
    output: { system: string[] },
  ): Promise<void>;
  /** Rewrites the request's messages in place. */
  "experimental.chat.messages.transform"(
    input: unknown,
    output: { messages: unknown[] },
  ): Promise<void>;
}

/** The OpenCode plugin: `{ id, server }`. */
export interface OpenCodePlugin {
  id: "smarter-compact";
  server(input: unknown, options?: HostOptions): Promise<OpenCodeHooks>;
}

declare const plugin: OpenCodePlugin;
export default plugin;
