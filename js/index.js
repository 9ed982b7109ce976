// The public API of smarter-compact: one compactor per session, its tools, the embedder. The
// default export is the OpenCode plugin (OpenCode then ignores the named exports).
export { constants, createCompactor, sessionPath, version } from "./compactor.js";
export { codedError } from "./errors.js";
export { openSqlite } from "./shims/index.js";
export { toolDefinitions, runTool } from "./tools.js";
export { compactContext } from "./compact-context.js";
export { createEmbedder } from "./embedder.js";
export { default } from "./hosts/opencode.js";
