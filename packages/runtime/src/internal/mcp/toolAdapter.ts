// An MCP tool as one of Alisio's: named `mcp__<server>__<tool>` by ToolOrigins, its JSON Schema
// offered as is and checked before the call (a bad call is a tool error the model reads), its
// effect from `readOnlyHint`, its result converted by `results.ts` (in `call.ts`).
import { ToolError } from "@alisio/domain/Errors"
import type { Tool, ToolContext, ToolResult } from "@alisio/domain/Tool"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import * as Effect from "effect/Effect"
import { effectFromMcpHints } from "../../ToolOrigins.js"
import type { McpToolInfo } from "./connection.js"
import { mcpName, safeName } from "./names.js"

// One validator for every server: compiled schemas are cached per tool, below.
let validatorProvider: AjvJsonSchemaValidator | undefined

type Check = (input: unknown) => { readonly valid: boolean; readonly errorMessage?: string | undefined }

/**
 * The check of a tool's arguments, compiled on first use. A schema the validator cannot compile
 * (an unknown draft, a broken `$ref`) checks nothing: the server judges the call itself.
 */
const checkerFor = (schema: { readonly [key: string]: unknown }): (() => Check | undefined) => {
  let compiled: Check | undefined | null = null
  return () => {
    if (compiled !== null) return compiled
    try {
      validatorProvider ??= new AjvJsonSchemaValidator()
      const { $schema: _, ...rest } = schema
      compiled = validatorProvider.getValidator(rest as never) as Check
    } catch {
      compiled = undefined
    }
    return compiled
  }
}

/**
 * Runs a call on the server: the server's own tool name, arguments already checked, the result as
 * the model reads it. Called as the tool's Effect runs, so it may look at the server's state then.
 */
export type CallTool = (name: string, args: unknown, context: ToolContext) => Effect.Effect<ToolResult, ToolError>

/** The tool as it is registered (before ToolOrigins prefixes its name). */
export const toTool = (info: McpToolInfo, serverName: string, call: CallTool): Tool => {
  const { $schema: _, ...parameters } = info.inputSchema
  const check = checkerFor(info.inputSchema)
  const publicName = mcpName(serverName, info.name)
  return {
    name: safeName(info.name),
    description: info.description ?? info.title ?? info.annotations?.title ?? "",
    effect: effectFromMcpHints(info.annotations),
    parameters: parameters.type === undefined ? { type: "object", ...parameters } : parameters,
    execute: (args, context) =>
      Effect.suspend(() => {
        const verdict = check()?.(args)
        if (verdict !== undefined && !verdict.valid) {
          return new ToolError({
            message: `Invalid arguments for ${publicName}: ${verdict.errorMessage ?? "they do not match its schema"}. Call it again with arguments that match its input schema.`
          })
        }
        return call(info.name, args, context)
      })
  }
}
