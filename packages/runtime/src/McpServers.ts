import { allSurfaces, CommandError, type CommandOutput } from "@alisio/domain/Command"
import type { ImagePart, TextPart } from "@alisio/domain/Message"
import { ToolEffect } from "@alisio/domain/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { McpServer } from "./ConfigSchema.js"
import type { CatalogCommand, CommandProvider } from "./internal/commands/entry.js"
import { attachMentions } from "./internal/mcp/mentions.js"
import { safeName } from "./internal/mcp/names.js"
import { makeRegistry } from "./internal/mcp/registry.js"
import type { McpResourceContent } from "./internal/mcp/resourceRequests.js"
import { Tools } from "./Tools.js"

/** Something that went wrong with an MCP server, for the `mcp_server_failed` event (MCP-1). */
export interface McpFailure {
  /** Increasing: a run reports each failure it has not reported yet. */
  readonly seq: number
  readonly server: string
  readonly stage: "start" | "closed"
  readonly message: string
  readonly willRestart?: boolean | undefined
  readonly log?: string | undefined
}

/** One tool a server offers, as `alisio mcp get` shows it. */
export const McpToolReport = Schema.Struct({
  /** The name the model sees: `mcp__<server>__<tool>`. */
  name: Schema.String,
  /** The server's own name for it. */
  serverName: Schema.String,
  effect: ToolEffect,
  description: Schema.String
})
export type McpToolReport = typeof McpToolReport.Type

/** Where a server stands: never asked to start, starting, connected, gone (restarts on its next call), failed. */
export const McpServerStatus = Schema.Literal("disabled", "not_started", "starting", "connected", "stopped", "failed")
export type McpServerStatus = typeof McpServerStatus.Type

/** One server as `alisio mcp list` shows it. */
export const McpServerReport = Schema.Struct({
  name: Schema.String,
  transport: Schema.Literal("stdio", "http", "sse"),
  /** The command line, or the URL (before `${VAR}` expansion, so no secret is shown). */
  target: Schema.String,
  status: McpServerStatus,
  tools: Schema.Array(McpToolReport),
  prompts: Schema.Array(Schema.String),
  /** The last problem: why it failed or stopped, tools that could not be offered. */
  error: Schema.optional(Schema.String),
  /** Its log file (stderr of a stdio server, starts and stops). */
  log: Schema.optional(Schema.String)
})
export type McpServerReport = typeof McpServerReport.Type

/** A prompt a server offers, as the command catalog lists it: `/mcp__<server>__<prompt>`. */
export interface McpPromptDescriptor {
  /** `mcp__<server>__<prompt>`. */
  readonly name: string
  readonly server: string
  /** The server's own name for it. */
  readonly prompt: string
  readonly description: string
  readonly arguments: ReadonlyArray<{
    readonly name: string
    readonly description?: string | undefined
    readonly required: boolean
  }>
}

/** A prompt filled in: the messages to put in the conversation, and their text joined. */
export interface McpPromptResult {
  readonly description?: string | undefined
  readonly messages: ReadonlyArray<{
    readonly role: "user" | "assistant"
    readonly content: ReadonlyArray<TextPart | ImagePart>
  }>
  readonly text: string
}

/** A resource a running server offers, as `@<server>:<uri>` completes it. */
export interface McpResourceDescriptor {
  readonly server: string
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
}

export type { McpResourceContent }

/**
 * A prompt that could not be had: `unknown` (no server offers it), `usage` (a required argument
 * missing), `failed` (the server failed or refused).
 */
export class McpError extends Schema.TaggedError<McpError>()("McpError", {
  reason: Schema.Literal("unknown", "usage", "failed"),
  server: Schema.optional(Schema.String),
  message: Schema.String
}) {}

/**
 * The MCP servers of the configuration (MCP-1): started lazily and concurrently when a run first
 * needs tools, their tools registered through `ToolOrigins` as `mcp__<server>__<tool>`, their
 * prompts listed for the command catalog. A server that fails is a diagnostic, never a failure
 * of the run. Closing the layer closes every server, its processes included.
 */
export class McpServers extends Context.Tag("@alisio/runtime/McpServers")<
  McpServers,
  {
    /**
     * Starts every enabled server (once, all at once) and waits until each connected or failed,
     * then applies tool lists the servers said changed. Never fails; the runner calls it before
     * each turn.
     */
    readonly ready: Effect.Effect<void>
    /** Every failure so far, oldest first. */
    readonly failures: Effect.Effect<ReadonlyArray<McpFailure>>
    /** Every configured server and where it stands (without starting any). */
    readonly status: Effect.Effect<ReadonlyArray<McpServerReport>>
    /** The prompts of the started servers, for the command catalog (`/mcp__<server>__<prompt>`). */
    readonly prompts: Effect.Effect<ReadonlyArray<McpPromptDescriptor>>
    /**
     * Fills in a prompt by its catalog name. `args` by name, or as the text after the command,
     * split on spaces onto the prompt's arguments in order (the last one takes the rest).
     */
    readonly getPrompt: (
      name: string,
      args: string | { readonly [name: string]: string }
    ) => Effect.Effect<McpPromptResult, McpError>
    /**
     * The resources of the running servers (none is started), each server's list kept until it
     * says the list changed.
     */
    readonly resources: Effect.Effect<ReadonlyArray<McpResourceDescriptor>>
    /**
     * Reads a resource (`resources/read`) on a configured, enabled server, starting it if it
     * never was: `unknown` for no such server, `failed` when it failed, refused or took too long.
     */
    readonly readResource: (server: string, uri: string) => Effect.Effect<ReadonlyArray<McpResourceContent>, McpError>
  }
>() {}

/**
 * Two server names that give the same tool names (`a.b` and `a_b` both become `mcp__a_b__*`) and
 * the same lower-case prompt commands have the same key: only the first written of them starts.
 */
export const serverNameKey = (name: string): string => safeName(name).toLowerCase()

export interface Options {
  /** `mcpServers` of the configuration. */
  readonly servers: { readonly [name: string]: McpServer }
  /** The workspace: a stdio server's default folder, and the root servers are told of. */
  readonly cwd: string
  /** Where each server's log file goes (`<state home>/mcp`). */
  readonly logFolder: string
  /** Where `${VAR}` and inherited variables come from; `process.env` by default. */
  readonly env?: { readonly [name: string]: string | undefined } | undefined
  /** One line per failure (headless: stderr). */
  readonly diagnostic?: ((line: string) => Effect.Effect<void>) | undefined
  /** Defaults of servers that set no `timeout`. */
  readonly startupMs?: number | undefined
  readonly callMs?: number | undefined
  /** How long stopping a server may take before its processes are killed. */
  readonly closeMs?: number | undefined
  /** What Alisio tells servers its version is. */
  readonly clientVersion?: string | undefined
}

export const defaultStartupMs = 30_000
export const defaultCallMs = 600_000

const nothing = McpServers.of({
  ready: Effect.void,
  failures: Effect.succeed([]),
  status: Effect.succeed([]),
  prompts: Effect.succeed([]),
  getPrompt: (name) =>
    new McpError({ reason: "unknown", message: `No MCP prompt is named ${name}: no MCP server is configured.` }),
  resources: Effect.succeed([]),
  readResource: (server) =>
    new McpError({ reason: "unknown", server, message: `No MCP server is named ${server}: none is configured.` })
})

/**
 * The service. Nothing starts here: the servers start at the first `ready`, and the SDK is loaded
 * then (`internal/mcp/sdk.ts`), so a run without MCP servers pays nothing for them.
 */
export const make = (options: Options): Effect.Effect<McpServers["Type"], never, Tools | Scope.Scope> =>
  Effect.gen(function* () {
    if (Object.keys(options.servers).length === 0) return nothing
    const tools = yield* Tools
    const scope = yield* Effect.scope
    return yield* makeRegistry(options, tools, scope)
  })

export const layer = (options: Options): Layer.Layer<McpServers, never, Tools> =>
  Layer.scoped(McpServers, make(options))

/** No servers: what a runtime without MCP gets. */
export const layerNone: Layer.Layer<McpServers> = Layer.succeed(McpServers, nothing)

/**
 * What the `@<server>:<uri>` mentions of a prompt attach to the user's message (MCP-1): each
 * resource read on its server, marked with its server and URI. A mention of a name that is no
 * enabled server is plain text; one that cannot be read fails it all, naming the mention.
 */
export const mentionAttachments = (
  servers: McpServers["Type"],
  prompt: string
): Effect.Effect<ReadonlyArray<TextPart | ImagePart>, McpError> =>
  prompt.includes("@")
    ? Effect.flatMap(servers.status, (reports) =>
        attachMentions(
          prompt,
          reports.filter((report) => report.status !== "disabled").map((report) => report.name),
          servers.readResource
        )
      )
    : Effect.succeed([])

/** `<name> [mood]`: a prompt's arguments in order, the optional ones in brackets. */
const argumentHint = (descriptor: McpPromptDescriptor): string | undefined =>
  descriptor.arguments.length === 0
    ? undefined
    : descriptor.arguments
        .map((argument) => (argument.required ? `<${argument.name}>` : `[${argument.name}]`))
        .join(" ")

/**
 * The servers' prompts as commands of the catalog (CMD-1, MCP-1): `/mcp__<server>__<prompt> args`
 * fills the prompt in on its server (the words onto its arguments in order, the last taking the
 * rest) and sends its text as the user's prompt. Only started servers' prompts are listed: a
 * surface that resolves an `mcp__` name, or lists every command, runs `ready` first.
 */
export const promptCommands = (servers: McpServers["Type"]): CommandProvider => ({
  id: "mcp",
  commands: Effect.map(servers.prompts, (descriptors) =>
    descriptors.map(
      (descriptor): CatalogCommand => ({
        name: descriptor.name,
        description:
          descriptor.description === ""
            ? `The prompt ${descriptor.prompt} of the MCP server ${descriptor.server}`
            : descriptor.description,
        source: "mcp",
        surfaces: allSurfaces,
        execution: "prompt",
        argumentHint: argumentHint(descriptor),
        from: `MCP server ${descriptor.server}`,
        run: (args) =>
          servers.getPrompt(descriptor.name, args).pipe(
            Effect.mapError(
              (error) =>
                new CommandError({
                  reason: error.reason === "usage" ? "usage" : error.reason === "unknown" ? "unknown" : "failed",
                  command: descriptor.name,
                  message: error.message
                })
            ),
            Effect.flatMap((result) =>
              result.text.trim() === ""
                ? Effect.fail(
                    new CommandError({
                      reason: "failed",
                      command: descriptor.name,
                      message: `The MCP server ${descriptor.server} gave /${descriptor.name} no text to send.`
                    })
                  )
                : Effect.succeed<CommandOutput>({ _tag: "Prompt", prompt: result.text })
            )
          )
      })
    )
  )
})
