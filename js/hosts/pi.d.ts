// Types of the Pi extension (`smarter-compact/pi`).
import type { HostOptions } from "../index.js";

/** A Pi tool as the extension registers it. */
export interface PiTool {
  name: string;
  label: string;
  description: string;
  parameters: Record<string, unknown>;
  execute(
    id: string,
    params: Record<string, unknown> | undefined,
    signal: unknown,
    onUpdate: unknown,
    ctx: unknown,
  ): Promise<{ content: { type: "text"; text: string }[]; details: Record<string, never> }>;
}

/** The part of Pi's extension API the extension uses. */
export interface PiExtensionApi {
  registerTool(tool: PiTool): void;
  registerCommand(
    name: string,
    command: { description: string; handler(args: unknown, ctx: unknown): Promise<void> },
  ): void;
  /** `before_agent_start`, `context` and `session_shutdown`. */
  on(event: string, handler: (event: never, ctx: never) => unknown): void;
}

/** Registers the tools, the `/smarter-compact:compact` command and the request rewrite. */
export default function smarterCompact(pi: PiExtensionApi, options?: HostOptions): Promise<void>;
