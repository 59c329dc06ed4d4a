// An MCP tool as one of Alisio's: named `mcp__<server>__<tool>` by ToolOrigins, its JSON Schema
// offered as is and checked before the call (a bad call is a tool error the model reads), its
// effect from `readOnlyHint`, its call and its result's conversion in `call.ts`.
import { ToolError } from "@alisio/domain/Errors"
import type { Tool } from "@alisio/domain/Tool"
import { effectFromMcpHints } from "../../ToolOrigins.js"
import { CHECK_LIMIT_MS, checkerFor } from "./argumentCheck.js"
import { callTool, type Refusal, type ToolServer } from "./call.js"
import type { McpToolInfo } from "./connection.js"
import { mcpName, safeName } from "./names.js"

/** The tool as it is registered (before ToolOrigins prefixes its name); its calls go to `server`. */
export const toTool = (info: McpToolInfo, serverName: string, server: ToolServer): Tool => {
  const { $schema: _, ...parameters } = info.inputSchema
  const check = checkerFor(info.inputSchema)
  const publicName = mcpName(serverName, info.name)
  // Run as the call's Effect runs (`callTool`), before anything is sent.
  const refuse: Refusal = (args) => {
    const verdict = check()?.(args)
    if (verdict === undefined || verdict.valid) return undefined
    if (verdict.timedOut === true) {
      return new ToolError({
        message: `The arguments for ${publicName} could not be checked against its input schema within ${CHECK_LIMIT_MS / 1000} s (a pattern or rule of it takes too long on them); call it with other arguments.`
      })
    }
    return new ToolError({
      message: `Invalid arguments for ${publicName}: ${verdict.errorMessage ?? "they do not match its schema"}. Call it again with arguments that match its input schema.`
    })
  }
  return {
    name: safeName(info.name),
    description: info.description ?? info.title ?? info.annotations?.title ?? "",
    effect: effectFromMcpHints(info.annotations),
    parameters: parameters.type === undefined ? { type: "object", ...parameters } : parameters,
    execute: (args, context) => callTool(server, info.name, args, context, refuse)
  }
}
