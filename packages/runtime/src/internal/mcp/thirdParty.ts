// What the MCP code uses of the MCP SDK, and only that: every module here imports the SDK through
// this one. The run build (packages/cli/scripts/bundle.mjs) makes it a CommonJS file of its own,
// run-mcp.cjs, with the SDK, zod and ajv and no Effect, which run.cjs loads when a server first
// starts: a run without MCP servers neither reads nor holds that text (bench/README.md, stop 24).
// Types would cost nothing, but come through here too, so that the SDK has one door.
export { Client } from "@modelcontextprotocol/sdk/client/index.js"
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
export { STDIO_DEFAULT_MAX_BUFFER_SIZE, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
export {
  type CallToolResultSchema,
  type JSONRPCMessage,
  ListRootsRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResultSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
export { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
