import { stripVTControlCharacters } from "node:util"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as BrokenPipe from "./BrokenPipe.js"
import { type CliError, ExitCode, requestedExit, usageError } from "./CliError.js"
import * as CommandLine from "./CommandLine.js"
import { parseDuration } from "./Durations.js"
import * as Logging from "./Logging.js"
import { version } from "./Version.js"

// Only @effect/cli and effect load here: the heavy parts (SQLite, the openai SDK) are imported by
// the handlers, so `--help` stays fast.

const duration = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withDescription(`${description} (500ms, 30s, 2m, 1h, or milliseconds)`),
    Options.mapEffect((text) => {
      const ms = parseDuration(text)
      return ms === undefined
        ? Effect.fail(
            ValidationError.invalidValue(
              HelpDoc.p(`--${name}: "${text}" is not a duration; write e.g. 500ms, 30s or 2m`)
            )
          )
        : Effect.succeed(ms)
    }),
    Options.optional
  )

const count = (name: string, description: string, min: number) =>
  Options.integer(name).pipe(
    Options.withDescription(description),
    Options.mapEffect((n) =>
      n >= min
        ? Effect.succeed(n)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} must be at least ${min}, got ${n}`)))
    ),
    Options.optional
  )

const json = Options.boolean("json").pipe(Options.withDescription("Write JSON (JSONL for streams) on stdout"))

const pluginOption = Options.text("plugin").pipe(
  Options.repeated,
  Options.withDescription("Load an external plugin: a folder, an ESM file or an installed package (repeatable)")
)
const disablePluginOption = Options.text("disable-plugin").pipe(
  Options.repeated,
  Options.withDescription("Do not load the plugin with this id (repeatable)")
)

export const runFlags = {
  json: Options.boolean("json").pipe(
    Options.withDescription("Stream one RunEvent per line (JSONL) on stdout, nothing else")
  ),
  model: Options.text("model").pipe(
    Options.withAlias("m"),
    Options.withDescription("provider/model; a bare model name means the openai provider"),
    Options.optional
  ),
  session: Options.text("session").pipe(
    Options.withAlias("s"),
    Options.withDescription("Resume this session"),
    Options.optional
  ),
  continue: Options.boolean("continue").pipe(
    Options.withAlias("c"),
    Options.withDescription("Resume the most recent session in this directory")
  ),
  readOnly: Options.boolean("read-only").pipe(
    Options.withDescription("Only tools that cannot change the workspace or the world")
  ),
  yes: Options.boolean("yes").pipe(
    Options.withDescription(
      "Approve every tool request, and access to files outside the workspace (each such path is named on " +
        "stderr); without it a headless run denies what needs approval"
    )
  ),
  trustProject: Options.boolean("trust-project").pipe(
    Options.withDescription("Apply .alisio/config.yaml and load .alisio/plugins/ of the project")
  ),
  plugin: pluginOption,
  disablePlugin: disablePluginOption,
  cwd: Options.directory("cwd").pipe(
    Options.withDescription("The workspace (default: the current directory)"),
    Options.optional
  ),
  maxTurns: count("max-turns", "Most model turns in the run", 1),
  timeout: duration("timeout", "Active time allowed for the run"),
  firstTokenTimeout: duration("first-token-timeout", "Silence allowed before a response's first token"),
  firstTokenRetries: count("first-token-retries", "Resends of a request that stayed silent", 0),
  streamIdleTimeout: duration("stream-idle-timeout", "Silence allowed in the middle of a response"),
  maxOutputTokens: count("max-output-tokens", "Output-token budget of each request", 1),
  truncationRecoveries: count("truncation-recoveries", "Re-requests after a response cut by the output budget", 0),
  runId: Options.text("run-id").pipe(Options.withDescription("The run's id (default: a UUID)"), Options.optional),
  requestId: Options.text("request-id").pipe(
    Options.withDescription("Idempotency key: a repeat returns the existing run"),
    Options.optional
  ),
  correlationId: Options.text("correlation-id").pipe(
    Options.withDescription("Copied to every event"),
    Options.optional
  ),
  prompt: Args.text({ name: "prompt" }).pipe(
    Args.withDescription("The task; `-` or nothing reads stdin"),
    Args.repeated
  )
}

export type RunFlags = {
  readonly [K in keyof typeof runFlags]: (typeof runFlags)[K] extends Options.Options<infer A>
    ? A
    : (typeof runFlags)[K] extends Args.Args<infer B>
      ? B
      : never
}

const run = Command.make("run", runFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./RunCommand.js")),
    (m) => m.runCommand(flags)
  )
).pipe(Command.withDescription("Run one task headless: the answer on stdout, tool activity on stderr"))

const sessionId = Args.text({ name: "session-id" }).pipe(
  Args.withDescription("A session id, or its first characters (the 8 that lists show are enough)")
)

const listFlags = {
  json,
  all: Options.boolean("all").pipe(
    Options.withDescription("Sessions of every folder, this one's first (default: only this folder's)")
  ),
  limit: count("limit", "Show at most this many sessions (default 20)", 1),
  cwd: Options.text("cwd").pipe(
    Options.withDescription("List the sessions of this folder instead of the current one"),
    Options.optional
  )
}
const showFlags = { json, sessionId }
const eventsFlags = { json, sessionId }
const removeFlags = {
  yes: Options.boolean("yes").pipe(
    Options.withDescription("Delete without asking; needed when stdin is not a terminal")
  ),
  sessionIds: Args.text({ name: "session-id" }).pipe(
    Args.withDescription("The sessions to delete, with their child sessions"),
    Args.atLeast(1)
  )
}
const exportFlags = {
  sessionId,
  format: Options.choice("format", ["jsonl", "md"]).pipe(
    Options.withDescription("jsonl: every stored event (as `run --json` streamed them); md: the conversation to read"),
    Options.optional
  ),
  output: Options.text("output").pipe(
    Options.withAlias("o"),
    Options.withDescription("Write to this file instead of stdout (a .md name means --format md)"),
    Options.optional
  )
}
const renameFlags = {
  sessionId,
  title: Args.text({ name: "title" }).pipe(Args.withDescription("The new title"), Args.atLeast(1))
}
const modelsFlags = { json }
const modelsUseFlags = {
  model: Args.text({ name: "provider/model" }).pipe(Args.withDescription("The model later runs use by default"))
}
const configFlags = {
  json: Options.boolean("json").pipe(Options.withDescription("One JSON object per setting, with its source")),
  trustProject: runFlags.trustProject,
  cwd: runFlags.cwd,
  maxTurns: runFlags.maxTurns,
  timeout: runFlags.timeout,
  firstTokenTimeout: runFlags.firstTokenTimeout,
  firstTokenRetries: runFlags.firstTokenRetries,
  streamIdleTimeout: runFlags.streamIdleTimeout,
  maxOutputTokens: runFlags.maxOutputTokens,
  truncationRecoveries: runFlags.truncationRecoveries
}
const configPathFlags = { json, cwd: runFlags.cwd, trustProject: runFlags.trustProject }

const sessionsModule = () => import("./SessionsCommand.js")

const sessionsList = Command.make("list", listFlags, (flags) =>
  Effect.flatMap(Effect.promise(sessionsModule), (m) => m.listSessions(flags))
).pipe(Command.withDescription("List sessions, newest first, with their short ids"))

const sessionsShow = Command.make("show", showFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./SessionShow.js")),
    (m) => m.showSession(flags)
  )
).pipe(Command.withDescription("Show a session's whole conversation (--json: the messages themselves)"))

const sessionsEvents = Command.make("events", eventsFlags, (flags) =>
  Effect.flatMap(Effect.promise(sessionsModule), (m) => m.sessionEvents(flags))
).pipe(Command.withDescription("Replay a session's stored events (JSONL with --json)"))

const sessionsRemove = Command.make("rm", removeFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./SessionRemove.js")),
    (m) => m.removeSessions(flags)
  )
).pipe(Command.withDescription("Delete sessions and their child sessions (asks first; --yes when not on a terminal)"))

const sessionsExport = Command.make("export", exportFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./SessionExport.js")),
    (m) => m.exportSession(flags)
  )
).pipe(Command.withDescription("Export a session and its child sessions as JSONL events or Markdown"))

const sessionsRename = Command.make("rename", renameFlags, (flags) =>
  Effect.flatMap(Effect.promise(sessionsModule), (m) => m.renameSession(flags))
).pipe(Command.withDescription("Give a session a title of your own"))

const sessions = Command.make("sessions").pipe(
  Command.withDescription("List, show, export, rename and delete stored sessions"),
  Command.withSubcommands([sessionsList, sessionsShow, sessionsEvents, sessionsExport, sessionsRename, sessionsRemove])
)

const modelsModule = () => import("./ModelsCommand.js")

const modelsUse = Command.make("use", modelsUseFlags, (flags) =>
  Effect.flatMap(Effect.promise(modelsModule), (m) => m.useModel(flags))
).pipe(Command.withDescription("Make a model the default of later runs (sets defaultModel in the global config.yaml)"))

const models = Command.make("models", modelsFlags, (flags) =>
  Effect.flatMap(Effect.promise(modelsModule), (m) => m.listModels(flags))
).pipe(
  Command.withDescription("List the models of the configured providers; the default is marked with *"),
  Command.withSubcommands([modelsUse])
)

const configModule = () => import("./ConfigCommand.js")

const configPath = Command.make("path", configPathFlags, (flags) =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.configPaths(flags))
).pipe(Command.withDescription("Where the configuration files are, and whether the project's applies"))

const configSchema = Command.make("schema", {}, () =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.configSchema)
).pipe(Command.withDescription("Print the JSON Schema of config.yaml (for editor completion)"))

const config = Command.make("config", configFlags, (flags) =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.showConfig(flags))
).pipe(
  Command.withDescription("Print the effective configuration and where each value comes from"),
  Command.withSubcommands([configPath, configSchema])
)

const eventsSchema = Command.make("schema", {}, () =>
  Effect.flatMap(
    Effect.promise(() => import("./EventsCommand.js")),
    (m) => m.eventsSchema
  )
).pipe(Command.withDescription("Print the JSON Schema of the run events (`run --json` lines)"))

const events = Command.make("events").pipe(
  Command.withDescription("The run events' contract"),
  Command.withSubcommands([eventsSchema])
)

const pluginsListFlags = {
  json,
  plugin: pluginOption,
  disablePlugin: disablePluginOption,
  trustProject: Options.boolean("trust-project").pipe(
    Options.withDescription("Include the project's .alisio/plugins/ (runs their code)")
  ),
  readOnly: Options.boolean("read-only").pipe(Options.withDescription("List as a --read-only run would load them"))
}

const pluginsInstallFlags = { spec: Args.text({ name: "npm-spec|path" }) }

const pluginsList = Command.make("list", pluginsListFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./PluginsCommand.js")),
    (m) => m.listPlugins(flags)
  )
).pipe(Command.withDescription("List the plugins: where each comes from, what it registered, its problems"))

const pluginsInstall = Command.make("install", pluginsInstallFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./PluginsCommand.js")),
    (m) => m.installPlugin(flags)
  )
).pipe(Command.withDescription("Install a plugin with npm into the config folder and add it to config.yaml"))

const plugins = Command.make("plugins").pipe(
  Command.withDescription("List and install plugins"),
  Command.withSubcommands([pluginsList, pluginsInstall])
)

export const alisio = Command.make("alisio").pipe(
  Command.withDescription("An agent CLI that runs a language model with tools and keeps every session."),
  Command.withSubcommands([run, sessions, models, config, events, plugins])
)

export const cli = Command.run(alisio, { name: "alisio", version })

/** The command tree as `CommandLine` checks argv against it: the same flags as the commands above. */
export const commandLine = CommandLine.group({
  run: CommandLine.leaf(runFlags),
  sessions: CommandLine.group({
    list: CommandLine.leaf(listFlags),
    show: CommandLine.leaf(showFlags),
    events: CommandLine.leaf(eventsFlags),
    export: CommandLine.leaf(exportFlags),
    rename: CommandLine.leaf(renameFlags),
    rm: CommandLine.leaf(removeFlags)
  }),
  models: CommandLine.group({ use: CommandLine.leaf(modelsUseFlags) }, CommandLine.leaf(modelsFlags)),
  config: CommandLine.group(
    { path: CommandLine.leaf(configPathFlags), schema: CommandLine.leaf({}) },
    CommandLine.leaf(configFlags)
  ),
  events: CommandLine.group({ schema: CommandLine.leaf({}) }),
  plugins: CommandLine.group({
    list: CommandLine.leaf(pluginsListFlags),
    install: CommandLine.leaf(pluginsInstallFlags)
  })
})

const isCliError = (error: unknown): error is CliError => Predicate.isTagged(error, "CliError")

const seeHelp = (path: ReadonlyArray<string>) => `(see ${CommandLine.commandName("alisio", path)} --help)`

/** A mistake in the command line as one line and the command whose `--help` explains it. */
const usageMistake = (message: string, path: ReadonlyArray<string>) => usageError(`${message} ${seeHelp(path)}`)

const oneLine = (doc: HelpDoc.HelpDoc) => stripVTControlCharacters(HelpDoc.toAnsiText(doc)).replace(/\s+/g, " ").trim()

/**
 * Runs the program on checked argv. @effect/cli prints its own validation errors with blank lines
 * around them; they become one `CliError` line instead, printed with the others.
 */
const program = (argv: ReadonlyArray<string>) => {
  const [node = "node", script = "alisio", ...words] = argv
  return Either.match(CommandLine.check(commandLine, words), {
    onLeft: (mistake) => Effect.fail(usageMistake(mistake.message, mistake.path)),
    onRight: (checked) =>
      Console.consoleWith((console) =>
        cli([node, script, ...checked.argv]).pipe(
          Console.withConsole({ ...console, error: () => Effect.void }),
          Effect.catchIf(ValidationError.isValidationError, (error) =>
            Effect.fail(usageMistake(oneLine(error.error), checked.path))
          )
        )
      )
  })
}

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>, signalled: boolean): number => {
  if (signalled || (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause))) return ExitCode.cancelled
  if (Exit.isSuccess(exit)) return requestedExit()
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && isCliError(failure.value)) return failure.value.exitCode
  return ExitCode.failed
}

/** Prints a user's mistake as one line; anything else is a bug and keeps its details. */
const reportFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapErrorCause(effect, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && isCliError(failure.value)) {
      const message = failure.value.message
      return Effect.sync(() => process.stderr.write(`alisio: ${message}\n`))
    }
    return Effect.sync(() => process.stderr.write(`alisio: internal error\n${Cause.pretty(cause)}\n`))
  })

/**
 * The edge: parses argv, runs the command, exits with its code. Ctrl-C once cancels, twice exits.
 * SIGTERM and SIGHUP (the terminal closed) cancel like Ctrl-C (TL-7).
 */
export const main = (argv: ReadonlyArray<string>): void => {
  BrokenPipe.watch()
  let signalled = false
  const onSignal = () => {
    signalled = true
    process.once("SIGINT", () => process.exit(ExitCode.cancelled))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  let hungUp = false
  const onHangUp = () => {
    if (hungUp) return
    hungUp = true
    // runMain interrupts the program on SIGTERM only; a closed terminal takes the same path.
    process.emit("SIGTERM", "SIGTERM")
  }
  process.once("SIGHUP", onHangUp)
  for (const stream of [process.stdout, process.stderr]) {
    // Writing to a closed terminal fails with EIO, often before SIGHUP is handled: that is the
    // hang-up too, and must not crash the cancellation. Other errors keep their default (a crash).
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EIO" || hungUp) onHangUp()
      else if (stream.listenerCount("error") === 1) throw error
    })
  }
  program(argv).pipe(
    reportFailure,
    Effect.provide(Layer.merge(NodeContext.layer, Logging.layer)),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => onExit(exitCodeOf(exit, signalled))
    })
  )
}
