// Everything that needs the MCP SDK, in one module imported on demand (see `loadSdk` in server.ts).
export { callTool } from "./call.js"
export { connect, getPrompt, listPrompts, listTools } from "./connection.js"
export { listResources, readResource } from "./resourceRequests.js"
export { toTool } from "./toolAdapter.js"
