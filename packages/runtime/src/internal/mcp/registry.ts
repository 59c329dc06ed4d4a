// Every configured MCP server together: started at once on the first `ready`, failures kept in
// order for the runs to report, prompts by their catalog names, all closed together.
import * as path from "node:path"
import type { ImagePart, TextPart } from "@alisio/domain/Message"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import {
  defaultCallMs,
  defaultStartupMs,
  McpError,
  type McpFailure,
  type McpPromptDescriptor,
  type McpPromptResult,
  type McpResourceDescriptor,
  type McpServerReport,
  McpServers,
  type Options,
  serverNameKey
} from "../../McpServers.js"
import type { Tools } from "../../Tools.js"
import { appendLog } from "./logFile.js"
import { safeName } from "./names.js"
import { type McpContent, toParts } from "./results.js"
import { makeServer } from "./server.js"
import { targetOf } from "./serverConfig.js"

/** The line a failure prints (after `alisio: warning: `). */
export const describeFailure = (failure: Omit<McpFailure, "seq">): string => {
  const log = failure.log === undefined ? "" : ` (log: ${failure.log})`
  if (failure.stage === "start") return `MCP server ${failure.server} did not start: ${failure.message}${log}`
  const next =
    failure.willRestart === true
      ? "the next call of one of its tools starts it again"
      : "its tools are no longer offered"
  return `MCP server ${failure.server} stopped: ${failure.message}; ${next}${log}`
}

/** The text after `/mcp__server__prompt`, onto the prompt's arguments in order; the last takes the rest. */
const argumentsFrom = (text: string, names: ReadonlyArray<string>): Record<string, string> => {
  const words = text.trim() === "" ? [] : text.trim().split(/\s+/)
  const args: Record<string, string> = {}
  names.forEach((name, index) => {
    const value = index === names.length - 1 ? words.slice(index).join(" ") : words[index]
    if (value !== undefined && value !== "") args[name] = value
  })
  return args
}

/**
 * The servers whose names stay apart once Alisio's (`a.b` and `a_b` both become `a_b`, and prompt
 * commands are lower case): the first written keeps the name, a later one is refused, so which
 * server's tools a name reaches never depends on which started first, nor do two share a log.
 */
const distinctNames = <A>(entries: ReadonlyArray<readonly [string, A]>) => {
  const owners = new Map<string, string>()
  const kept: Array<readonly [string, A]> = []
  const clashes: Array<{ readonly name: string; readonly first: string }> = []
  for (const entry of entries) {
    const key = serverNameKey(entry[0])
    const first = owners.get(key)
    if (first === undefined) {
      owners.set(key, entry[0])
      kept.push(entry)
    } else {
      clashes.push({ name: entry[0], first })
    }
  }
  return { kept, clashes }
}

export const makeRegistry = (
  options: Options,
  tools: Tools["Type"],
  scope: Scope.Scope
): Effect.Effect<McpServers["Type"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const failures = yield* Ref.make<ReadonlyArray<McpFailure>>([])
    const diagnostic = options.diagnostic ?? (() => Effect.void)
    const fail = (failure: Omit<McpFailure, "seq">) =>
      Effect.gen(function* () {
        yield* Ref.update(failures, (all) => [...all, { ...failure, seq: all.length + 1 }])
        yield* diagnostic(describeFailure(failure))
        if (failure.log !== undefined) yield* appendLog(failure.log, describeFailure(failure))
      })
    const { kept, clashes } = distinctNames(Object.entries(options.servers))
    const refused = new Map<string, McpServerReport>()
    for (const { name, first } of clashes) {
      const message =
        `its name and ${first}'s both give tools named mcp__${safeName(name)}__*, so only ${first} starts: ` +
        "rename one of them in mcpServers"
      yield* fail({ server: name, stage: "start", message })
      const config = options.servers[name]!
      refused.set(name, {
        name,
        transport: config.type,
        target: targetOf(config),
        status: "failed",
        tools: [],
        prompts: [],
        error: message
      })
    }
    const servers = yield* Effect.forEach(kept, ([name, config]) =>
      makeServer(name, config, {
        cwd: path.resolve(options.cwd),
        logFolder: options.logFolder,
        env: options.env ?? process.env,
        closeMs: options.closeMs ?? 2_000,
        defaultStartupMs: options.startupMs ?? defaultStartupMs,
        defaultCallMs: options.callMs ?? defaultCallMs,
        clientVersion: options.clientVersion ?? "0.0.0",
        tools,
        scope,
        fail,
        diagnostic
      })
    )
    // Every server is closed at once: a slow one does not keep the others running meanwhile.
    yield* Effect.addFinalizer(() =>
      Effect.forEach(servers, (server) => server.close, { concurrency: "unbounded", discard: true })
    )

    const prompts = Effect.map(
      Effect.forEach(servers, (server) => server.prompts, { concurrency: "unbounded" }),
      (lists): ReadonlyArray<McpPromptDescriptor> => lists.flat()
    )

    const getPrompt = (name: string, given: string | { readonly [name: string]: string }) =>
      Effect.gen(function* () {
        yield* Effect.forEach(servers, (server) => server.ready, { concurrency: "unbounded", discard: true })
        const descriptor = (yield* prompts).find((prompt) => prompt.name === name)
        if (descriptor === undefined) {
          return yield* new McpError({ reason: "unknown", message: `No MCP server offers a prompt named ${name}.` })
        }
        const args =
          typeof given === "string"
            ? argumentsFrom(
                given,
                descriptor.arguments.map((argument) => argument.name)
              )
            : given
        const missing = descriptor.arguments.filter(
          (argument) => argument.required && args[argument.name] === undefined
        )
        if (missing.length > 0) {
          return yield* new McpError({
            reason: "usage",
            server: descriptor.server,
            message: `/${name} needs ${missing.map((argument) => argument.name).join(", ")}: give ${missing.length === 1 ? "it" : "them"} after the command.`
          })
        }
        const server = servers.find((each) => each.name === descriptor.server)!
        const result = yield* server.getPrompt(descriptor.prompt, args).pipe(
          Effect.mapError(
            (error) =>
              new McpError({
                reason: "failed",
                server: descriptor.server,
                message: `The MCP server ${descriptor.server} ${error.message}`
              })
          )
        )
        const messages = result.messages.map((message) => ({
          role: message.role,
          content: toParts([message.content as McpContent]) as ReadonlyArray<TextPart | ImagePart>
        }))
        const text = messages
          .flatMap((message) => message.content.flatMap((part) => (part._tag === "text" ? [part.text] : [])))
          .join("\n\n")
        return { description: result.description, messages, text } satisfies McpPromptResult
      })

    const resources = Effect.map(
      Effect.forEach(
        servers,
        (server) =>
          Effect.map(server.resources, (infos) =>
            infos.map(
              (info): McpResourceDescriptor => ({
                server: server.name,
                uri: info.uri,
                name: info.name,
                title: info.title,
                description: info.description,
                mimeType: info.mimeType
              })
            )
          ),
        { concurrency: "unbounded" }
      ),
      (lists) => lists.flat()
    )

    const readResource = (name: string, uri: string) =>
      Effect.gen(function* () {
        const server = servers.find((each) => each.name === name)
        const report = server === undefined ? undefined : yield* server.report
        if (server === undefined || report?.status === "disabled") {
          return yield* new McpError({
            reason: "unknown",
            server: name,
            message: `No enabled MCP server is named ${name}.`
          })
        }
        return yield* server.readResource(uri).pipe(
          Effect.mapError(
            (error) =>
              new McpError({
                reason: "failed",
                server: name,
                message: `The MCP server ${name} ${error.message.replace(/^The MCP server \S+ /, "")}`
              })
          )
        )
      })

    return McpServers.of({
      ready: Effect.forEach(servers, (server) => server.ready, { concurrency: "unbounded", discard: true }),
      failures: Ref.get(failures),
      // Listed in their written order, a refused one with why, so `alisio mcp list` shows every server.
      status: Effect.forEach(Object.keys(options.servers), (name) => {
        const server = servers.find((each) => each.name === name)
        return server === undefined ? Effect.succeed(refused.get(name)!) : server.report
      }),
      prompts,
      getPrompt,
      resources,
      readResource
    })
  })
