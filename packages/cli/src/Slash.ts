// Slash commands in `alisio run "/name args"` (CMD-1): the catalog and the system context as the
// CLI composes them, and what a typed `/name` does headless.

import { type CommandError, CommandOutput, parseSlashCommand, type SlashCommand } from "@alisio/domain/Command"
import { formatDuration } from "@alisio/domain/Durations"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import * as CommandCatalog from "@alisio/runtime/CommandCatalog"
import * as McpServers from "@alisio/runtime/McpServers"
import { userHome } from "@alisio/runtime/PathLayout"
import * as SystemContext from "@alisio/runtime/SystemContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { registerProviders, type Setup } from "./App.js"
import { CliError, ExitCode } from "./CliError.js"
import { jsonLine } from "./JsonLine.js"

/** The MCP servers' prompts join the catalog as `/mcp__<server>__<prompt>` (MCP-1). */
const mcpPrompts = Layer.scopedDiscard(
  Effect.gen(function* () {
    const catalog = yield* CommandCatalog.CommandCatalog
    const servers = yield* McpServers.McpServers
    yield* catalog.contribute(McpServers.promptCommands(servers))
  })
)

/**
 * The system context over the runtime: the user's and (with `--trust-project`) the project's
 * skills, `~/.claude/skills` of the user and the instruction files.
 */
export const systemContextLayer = (setup: Setup, trustProject: boolean) =>
  SystemContext.layer({
    cwd: setup.cwd,
    configHome: setup.paths.configHome,
    home: userHome(),
    trustProject
  })

/**
 * The command catalog over the system context and the runtime: core commands, templates, skills,
 * plugins' commands and the MCP servers' prompts.
 */
export const commandsLayer = (setup: Setup) =>
  mcpPrompts.pipe(
    Layer.provideMerge(CommandCatalog.layer({ defaultModel: setup.config.defaultModel, limits: setup.config.limits }))
  )

/**
 * The system context and the command catalog over the runtime: the user's and (with
 * `--trust-project`) the project's templates and skills, `~/.claude/commands` and
 * `~/.claude/skills` of the user, the instruction files, and the MCP servers' prompts.
 */
export const catalogLayer = (setup: Setup, trustProject: boolean) =>
  commandsLayer(setup).pipe(Layer.provideMerge(systemContextLayer(setup, trustProject)))

/**
 * Starts the MCP servers (`ready`), so their prompts are in the catalog: MCP prompts are listed
 * only once their servers run, and servers start only when something needs them.
 */
export const startMcpServers = Effect.flatMap(Effect.serviceOption(McpServers.McpServers), (servers) =>
  Option.isSome(servers) ? servers.value.ready : Effect.void
)

/**
 * The slash command the words of `alisio run` type, if they type one. Only words typed on the
 * command line are read so: a prompt piped on stdin is always a prompt. The rule is
 * `parseSlashCommand`'s: `/usr/bin is…` and ` /tmp…` (a leading space) are prompts.
 */
export const typedCommand = (words: ReadonlyArray<string>) =>
  words.length === 0 || (words.length === 1 && words[0] === "-") ? Option.none() : parseSlashCommand(words.join(" "))

/** A command error as the CLI reports it: a usage error (exit 2) unless the command itself failed. */
export const commandFailure = (error: CommandError, untrusted: ReadonlyArray<string> = []): CliError => {
  const unread =
    untrusted.length === 0 ? "" : ` The project's ${untrusted.join(", ")} are read only with --trust-project.`
  const remedy =
    error.reason === "unknown"
      ? `${unread} \`alisio commands list\` lists the commands; to send text that starts with / to the model, begin it with a space: alisio run " /${error.command} …"`
      : error.reason === "unavailable" && error.message.includes("interactive")
        ? " `alisio commands list` lists what `alisio run` can do."
        : ""
  return new CliError({
    message: `${error.message}${remedy}`,
    exitCode: error.reason === "failed" ? ExitCode.failed : ExitCode.usage
  })
}

const encodeOutput = onFirstCall(() => Schema.encodeSync(CommandOutput))

/** Prints what a core command returned: its text on stdout (one JSON line with `--json`), a hint on stderr. */
export const printOutput = (
  name: string,
  output: CommandOutput,
  options: { readonly json: boolean; readonly quiet: boolean }
) => {
  if (options.json) {
    process.stdout.write(jsonLine({ command: name, output: encodeOutput(output) }))
    return
  }
  const text = output._tag === "Prompt" ? output.prompt : output.text
  if (text !== "") process.stdout.write(`${text.replace(/\n$/, "")}\n`)
  if (output._tag === "Switch" && !options.quiet) {
    process.stderr.write(
      output.sessionId === undefined
        ? "alisio: `alisio run` without -s or -c starts a new session\n"
        : `alisio: go on with: alisio run -s ${output.sessionId.slice(0, 8)} "…"\n`
    )
  }
}

/**
 * Runs what `alisio run "/name args"` typed, on the `api` surface: a core command (or a plugin's)
 * prints its output and gives none; a template or skill gives the prompt to send. Problems with
 * the command's own file are warnings. `alisio run` builds the catalog (`commandsLayer`) for this
 * only: a run that types no command never needs it. `/Name` in capitals that names no command is
 * no command: `prompt`, the text typed, is sent as it is.
 */
export const runTypedCommand = (
  setup: Setup,
  typed: SlashCommand,
  prompt: string,
  sessionId: string | undefined,
  flags: { readonly json: boolean; readonly quiet: boolean }
) =>
  Effect.gen(function* () {
    const catalog = yield* CommandCatalog.CommandCatalog
    const { untrusted } = yield* SystemContext.SystemContext
    // `/mcp__<server>__<prompt>` is a prompt of a server that has to run to be known.
    if (typed.name.startsWith("mcp__")) yield* startMcpServers
    const resolved = yield* Effect.either(catalog.resolve(typed.name, "api"))
    if (Either.isLeft(resolved)) {
      if (typed.folded === true && resolved.left.reason === "unknown") return Option.some(prompt)
      return yield* Effect.fail(commandFailure(resolved.left, untrusted))
    }
    const command = resolved.right
    const warnings = (yield* catalog.diagnostics).filter((diagnostic) => diagnostic.file === command.from)
    // Said before the output; left out when the command's own error already names the file.
    const warn = (error?: { readonly message: string }) =>
      Effect.sync(() => {
        for (const diagnostic of warnings) {
          if (error?.message.includes(diagnostic.file) === true) continue
          process.stderr.write(`alisio: warning: ${SystemContext.formatDiagnostic(diagnostic)}\n`)
        }
      })
    // `/model` checks the name against the providers, `/compact` sends its summary to one; the other
    // core commands need none. Without a provider `/compact` would reach api.openai.com with no key.
    if (command.execution === "core") {
      const registered = yield* Effect.either(registerProviders(setup))
      if (Either.isLeft(registered) && typed.name === "compact") return yield* Effect.fail(registered.left)
    }
    const executed = Effect.mapError(
      catalog.execute(typed.name, typed.args, { sessionId, cwd: setup.cwd, surface: "api" }),
      (error) => commandFailure(error)
    )
    // A command is held to the run's active time as a model's turns are (a plugin's may never end).
    const timeoutMs = setup.config.limits?.timeoutMs
    const output = yield* (
      timeoutMs === undefined
        ? executed
        : Effect.timeoutFail(executed, {
            duration: timeoutMs,
            onTimeout: () =>
              new CliError({
                exitCode: ExitCode.failed,
                message: `/${typed.name} did not finish within ${formatDuration(timeoutMs)} (--timeout, limits.timeoutMs) and was stopped.`
              })
          })
    ).pipe(Effect.tapBoth({ onFailure: warn, onSuccess: () => warn() }))
    if (output._tag === "Prompt") return Option.some(output.prompt)
    printOutput(typed.name, output, flags)
    return Option.none<string>()
  })
