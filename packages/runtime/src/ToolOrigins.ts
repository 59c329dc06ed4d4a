import { createHash } from "node:crypto"
import { PluginError } from "@alisio/domain/Plugin"
import type { Tool, ToolEffect } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Tools } from "./Tools.js"

/**
 * Where a tool comes from. Every tool that is not core enters the registry through `register`
 * below, so naming, trust and effects follow one rule for plugins, MCP servers and subagents.
 */
export const ToolOrigin = Schema.Union(
  Schema.TaggedStruct("Core", {}),
  Schema.TaggedStruct("BuiltinPlugin", { pluginId: Schema.String }),
  Schema.TaggedStruct("ExternalPlugin", { pluginId: Schema.String }),
  Schema.TaggedStruct("McpServer", { server: Schema.String })
)
export type ToolOrigin = typeof ToolOrigin.Type

/** What OpenAI (and so every OpenAI-compatible server) accepts as a function name. */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

/** The host's own tools and builtin plugins are trusted (PL-2); everything else is not (PL-3). */
export const isTrusted = (origin: ToolOrigin): boolean => origin._tag === "Core" || origin._tag === "BuiltinPlugin"

/** The id errors and diagnostics name: the plugin id, `mcp:<server>`, or `core`. */
export const ownerOf = (origin: ToolOrigin): string => {
  switch (origin._tag) {
    case "Core":
      return "core"
    case "BuiltinPlugin":
    case "ExternalPlugin":
      return origin.pluginId
    case "McpServer":
      return `mcp:${origin.server}`
  }
}

/** A human description: `core`, `builtin plugin memory`, `plugin weather`, `MCP server github`. */
export const describeOrigin = (origin: ToolOrigin): string => {
  switch (origin._tag) {
    case "Core":
      return "core"
    case "BuiltinPlugin":
      return `builtin plugin ${origin.pluginId}`
    case "ExternalPlugin":
      return `plugin ${origin.pluginId}`
    case "McpServer":
      return `MCP server ${origin.server}`
  }
}

/** `p_<first 10 hex of sha256(id)>_`: the prefix of an external plugin's tools (PL-3). */
export const externalPrefix = (pluginId: string): string =>
  `p_${createHash("sha256").update(pluginId).digest("hex").slice(0, 10)}_`

/** The name the model sees: unprefixed for trusted origins, `p_<hash>_<name>`, or `mcp__<server>__<name>` (MCP-1). */
export const publicName = (origin: ToolOrigin, name: string): string => {
  switch (origin._tag) {
    case "Core":
    case "BuiltinPlugin":
      return name
    case "ExternalPlugin":
      return `${externalPrefix(origin.pluginId)}${name}`
    case "McpServer":
      return `mcp__${origin.server}__${name}`
  }
}

/** `internal` (the host itself) is only for trusted origins; others are degraded to `external` (PL-3). */
export const effectFor = (origin: ToolOrigin, effect: ToolEffect): ToolEffect =>
  effect === "internal" && !isTrusted(origin) ? "external" : effect

/** An MCP tool's effect from its annotations: `readOnlyHint` means `read`, anything else `external`. */
export const effectFromMcpHints = (annotations?: { readonly readOnlyHint?: boolean | undefined }): ToolEffect =>
  annotations?.readOnlyHint === true ? "read" : "external"

/** A name as a message quotes it: a 500-character name (MCP sets no limit) made a diagnostic of a screen. */
const quoted = (name: string): string =>
  name.length <= 80
    ? JSON.stringify(name)
    : `${JSON.stringify(name.slice(0, 80)).slice(0, -1)}…" (${name.length} characters)`

/** The tool as it is registered: its public name and its effect for this origin, or why it cannot be. */
export const prepare = (tool: Tool, origin: ToolOrigin): Either.Either<Tool, PluginError> => {
  const refuse = (message: string) => Either.left(new PluginError({ pluginId: ownerOf(origin), message }))
  if (typeof tool.name !== "string" || !/^[a-zA-Z0-9_-]+$/.test(tool.name)) {
    return refuse(
      `The tool name ${typeof tool.name === "string" ? quoted(tool.name) : JSON.stringify(tool.name)} may only hold letters, digits, "_" and "-".`
    )
  }
  const name = publicName(origin, tool.name)
  if (!toolNamePattern.test(name)) {
    return refuse(
      `The tool name ${quoted(name)} (from ${quoted(tool.name)}) is longer than the 64 characters models accept; shorten it.`
    )
  }
  if (typeof tool.execute !== "function") return refuse(`The tool "${tool.name}" has no execute function.`)
  const effect = effectFor(origin, tool.effect)
  return Either.right(name === tool.name && effect === tool.effect ? tool : { ...tool, name, effect })
}

/**
 * Registers a tool of `origin` for the life of the scope: named and degraded by `prepare`, refused
 * with a `PluginError` when its name is taken, recorded with its origin, removed when the scope
 * closes. Returns the tool as registered (its public name and effect).
 */
export const register = (tool: Tool, origin: ToolOrigin): Effect.Effect<Tool, PluginError, Tools | Scope.Scope> =>
  Effect.gen(function* () {
    const tools = yield* Tools
    const prepared = yield* prepare(tool, origin)
    const added = yield* Effect.acquireRelease(tools.add(prepared, origin), (added) =>
      added ? tools.remove(prepared) : Effect.void
    )
    if (!added) {
      const owner = (yield* tools.entries).find((entry) => entry.tool.name === prepared.name)
      const holder = owner === undefined ? "another tool" : describeOrigin(owner.origin)
      return yield* new PluginError({
        pluginId: ownerOf(origin),
        message: `The tool name "${prepared.name}" is already taken by ${holder}.`
      })
    }
    return prepared
  })
