import { stripVTControlCharacters } from "node:util"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { usageError } from "./CliError.js"
import { docs } from "./CommandDocs.js"
import {
  commandsListFlags,
  configFlags,
  configGetFlags,
  configPathFlags,
  configSetFlags,
  configUnsetFlags,
  connectFlags,
  eventsFlags,
  exportFlags,
  listFlags,
  mcpAddFlags,
  mcpGetFlags,
  mcpListFlags,
  mcpRemoveFlags,
  modelsFlags,
  modelsUseFlags,
  pluginsInstallFlags,
  pluginsListFlags,
  pluginsRemoveFlags,
  removeFlags,
  renameFlags,
  showFlags
} from "./CommandFlags.js"
import * as CommandLine from "./CommandLine.js"
import { runAtEdge } from "./Edge.js"
import { runFlags, tuiFlags } from "./Flags.js"
import * as Help from "./Help.js"
import { version } from "./Version.js"

// Only @effect/cli and effect load here: the heavy parts (SQLite, the openai SDK) are imported by
// the handlers, so `--help` stays fast.

const run = Command.make("run", runFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./RunCommand.js")),
    (m) => m.runCommand(flags)
  )
).pipe(Command.withDescription(docs.run.description))

const sessionsModule = () => import("./SessionsCommand.js")

const sessionsList = Command.make("list", listFlags, (flags) =>
  Effect.flatMap(Effect.promise(sessionsModule), (m) => m.listSessions(flags))
).pipe(Command.withDescription(docs.sessionsList.description))

const sessionsShow = Command.make("show", showFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./SessionShow.js")),
    (m) => m.showSession(flags)
  )
).pipe(Command.withDescription(docs.sessionsShow.description))

const sessionsEvents = Command.make("events", eventsFlags, (flags) =>
  Effect.flatMap(Effect.promise(sessionsModule), (m) => m.sessionEvents(flags))
).pipe(Command.withDescription(docs.sessionsEvents.description))

const sessionsRemove = Command.make("rm", removeFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./SessionRemove.js")),
    (m) => m.removeSessions(flags)
  )
).pipe(Command.withDescription(docs.sessionsRemove.description))

const sessionsExport = Command.make("export", exportFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./SessionExport.js")),
    (m) => m.exportSession(flags)
  )
).pipe(Command.withDescription(docs.sessionsExport.description))

const sessionsRename = Command.make("rename", renameFlags, (flags) =>
  Effect.flatMap(Effect.promise(sessionsModule), (m) => m.renameSession(flags))
).pipe(Command.withDescription(docs.sessionsRename.description))

const sessions = Command.make("sessions").pipe(
  Command.withDescription(docs.sessions.description),
  Command.withSubcommands([sessionsList, sessionsShow, sessionsEvents, sessionsExport, sessionsRename, sessionsRemove])
)

const modelsModule = () => import("./ModelsCommand.js")

const modelsUse = Command.make("use", modelsUseFlags, (flags) =>
  Effect.flatMap(Effect.promise(modelsModule), (m) => m.useModel(flags))
).pipe(Command.withDescription(docs.modelsUse.description))

const models = Command.make("models", modelsFlags, (flags) =>
  Effect.flatMap(Effect.promise(modelsModule), (m) => m.listModels(flags))
).pipe(Command.withDescription(docs.models.description), Command.withSubcommands([modelsUse]))

const configModule = () => import("./ConfigCommand.js")

const configPath = Command.make("path", configPathFlags, (flags) =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.configPaths(flags))
).pipe(Command.withDescription(docs.configPath.description))

const configSchema = Command.make("schema", {}, () =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.configSchema)
).pipe(Command.withDescription(docs.configSchema.description))

const configGet = Command.make("get", configGetFlags, (flags) =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.getSetting(flags))
).pipe(Command.withDescription(docs.configGet.description))

const configSetModule = () => import("./ConfigSetCommand.js")

const configSet = Command.make("set", configSetFlags, (flags) =>
  Effect.flatMap(Effect.promise(configSetModule), (m) => m.setSetting(flags))
).pipe(Command.withDescription(docs.configSet.description))

const configUnset = Command.make("unset", configUnsetFlags, (flags) =>
  Effect.flatMap(Effect.promise(configSetModule), (m) => m.unsetSetting(flags))
).pipe(Command.withDescription(docs.configUnset.description))

const config = Command.make("config", configFlags, (flags) =>
  Effect.flatMap(Effect.promise(configModule), (m) => m.showConfig(flags))
).pipe(
  Command.withDescription(docs.config.description),
  Command.withSubcommands([configGet, configSet, configUnset, configPath, configSchema])
)

const eventsSchema = Command.make("schema", {}, () =>
  Effect.flatMap(
    Effect.promise(() => import("./EventsCommand.js")),
    (m) => m.eventsSchema
  )
).pipe(Command.withDescription(docs.eventsSchema.description))

const events = Command.make("events").pipe(
  Command.withDescription(docs.events.description),
  Command.withSubcommands([eventsSchema])
)

const pluginsList = Command.make("list", pluginsListFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./PluginsCommand.js")),
    (m) => m.listPlugins(flags)
  )
).pipe(Command.withDescription(docs.pluginsList.description))

const pluginInstallModule = () => import("./PluginInstall.js")

const installCommand = (name: string, description: string, remove: string) =>
  Command.make(name, pluginsInstallFlags, (flags) =>
    Effect.flatMap(Effect.promise(pluginInstallModule), (m) => m.installPlugin(flags, remove))
  ).pipe(Command.withDescription(description))

const uninstallCommand = (name: string, description: string) =>
  Command.make(name, pluginsRemoveFlags, (flags) =>
    Effect.flatMap(Effect.promise(pluginInstallModule), (m) => m.uninstallPlugin(flags))
  ).pipe(Command.withDescription(description))

const connect = Command.make("connect", connectFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./ConnectCommand.js")),
    (m) => m.connect(flags)
  )
).pipe(Command.withDescription(docs.connect.description))

const plugins = Command.make("plugins").pipe(
  Command.withDescription(docs.plugins.description),
  Command.withSubcommands([
    pluginsList,
    installCommand("install", docs.pluginsInstall.description, "alisio plugins remove"),
    uninstallCommand("remove", docs.pluginsRemove.description)
  ])
)

const mcpModule = () => import("./McpCommand.js")

const mcpList = Command.make("list", mcpListFlags, (flags) =>
  Effect.flatMap(Effect.promise(mcpModule), (m) => m.listServers(flags))
).pipe(Command.withDescription(docs.mcpList.description))

const mcpGet = Command.make("get", mcpGetFlags, (flags) =>
  Effect.flatMap(Effect.promise(mcpModule), (m) => m.getServer(flags))
).pipe(Command.withDescription(docs.mcpGet.description))

const mcpAdd = Command.make("add", mcpAddFlags, (flags) =>
  Effect.flatMap(Effect.promise(mcpModule), (m) => m.addServer(flags))
).pipe(Command.withDescription(docs.mcpAdd.description))

const mcpRemove = Command.make("remove", mcpRemoveFlags, (flags) =>
  Effect.flatMap(Effect.promise(mcpModule), (m) => m.removeServer(flags))
).pipe(Command.withDescription(docs.mcpRemove.description))

const mcp = Command.make("mcp").pipe(
  Command.withDescription(docs.mcp.description),
  Command.withSubcommands([mcpList, mcpGet, mcpAdd, mcpRemove])
)

const commandsList = Command.make("list", commandsListFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./CommandsCommand.js")),
    (m) => m.listCommands(flags)
  )
).pipe(Command.withDescription(docs.commandsList.description))

const commands = Command.make("commands").pipe(
  Command.withDescription(docs.commands.description),
  Command.withSubcommands([commandsList])
)

// The UI (pi-tui and its components) is imported only here: `run` and `--version` never load it.
export const alisio = Command.make("alisio", tuiFlags, (flags) =>
  Effect.flatMap(
    Effect.promise(() => import("./tui/TuiCommand.js")),
    (m) => m.tuiCommand(flags)
  )
).pipe(
  Command.withDescription(docs.alisio.description),
  Command.withSubcommands([
    run,
    sessions,
    models,
    config,
    events,
    plugins,
    commands,
    mcp,
    connect,
    installCommand("install", docs.install.description, "alisio uninstall"),
    uninstallCommand("uninstall", docs.uninstall.description)
  ])
)

export const cli = Command.run(alisio, { name: "alisio", version })

/** The command tree as `CommandLine` checks argv against it and `Help` describes it: the same flags as the commands above. */
export const commandLine = CommandLine.group(
  {
    run: CommandLine.leaf(runFlags, docs.run),
    sessions: CommandLine.group(
      {
        list: CommandLine.leaf(listFlags, docs.sessionsList),
        show: CommandLine.leaf(showFlags, docs.sessionsShow),
        events: CommandLine.leaf(eventsFlags, docs.sessionsEvents),
        export: CommandLine.leaf(exportFlags, docs.sessionsExport),
        rename: CommandLine.leaf(renameFlags, docs.sessionsRename),
        rm: CommandLine.leaf(removeFlags, docs.sessionsRemove)
      },
      { doc: docs.sessions }
    ),
    models: CommandLine.group(
      { use: CommandLine.leaf(modelsUseFlags, docs.modelsUse) },
      { own: CommandLine.leaf(modelsFlags), doc: docs.models }
    ),
    config: CommandLine.group(
      {
        get: CommandLine.leaf(configGetFlags, docs.configGet),
        set: CommandLine.leaf(configSetFlags, docs.configSet),
        unset: CommandLine.leaf(configUnsetFlags, docs.configUnset),
        path: CommandLine.leaf(configPathFlags, docs.configPath),
        schema: CommandLine.leaf({}, docs.configSchema)
      },
      { own: CommandLine.leaf(configFlags), doc: docs.config }
    ),
    events: CommandLine.group({ schema: CommandLine.leaf({}, docs.eventsSchema) }, { doc: docs.events }),
    plugins: CommandLine.group(
      {
        list: CommandLine.leaf(pluginsListFlags, docs.pluginsList),
        install: CommandLine.leaf(pluginsInstallFlags, docs.pluginsInstall),
        remove: CommandLine.leaf(pluginsRemoveFlags, docs.pluginsRemove)
      },
      { doc: docs.plugins }
    ),
    commands: CommandLine.group(
      { list: CommandLine.leaf(commandsListFlags, docs.commandsList) },
      { doc: docs.commands }
    ),
    mcp: CommandLine.group(
      {
        list: CommandLine.leaf(mcpListFlags, docs.mcpList),
        get: CommandLine.leaf(mcpGetFlags, docs.mcpGet),
        add: CommandLine.leaf(mcpAddFlags, docs.mcpAdd),
        remove: CommandLine.leaf(mcpRemoveFlags, docs.mcpRemove)
      },
      { doc: docs.mcp }
    ),
    connect: CommandLine.leaf(connectFlags, docs.connect),
    install: CommandLine.leaf(pluginsInstallFlags, docs.install),
    uninstall: CommandLine.leaf(pluginsRemoveFlags, docs.uninstall)
  },
  { own: CommandLine.leaf(tuiFlags), doc: docs.alisio }
)

/** A mistake in the command line as one line and the command whose `--help` explains it. */
const usageMistake = (message: string, path: ReadonlyArray<string>) =>
  usageError(`${message} (see ${CommandLine.commandName("alisio", path)} --help)`)

/** @effect/cli's words for `--cwd` naming a file, said as `checkWorkspace` says a missing folder. */
const notAFolder = /^Expected path '(.*)' to be a directory$/s

const validationMistake = (error: ValidationError.ValidationError, path: ReadonlyArray<string>) => {
  const message = oneLine(error.error)
  const file = notAFolder.exec(message)?.[1]
  return file === undefined ? usageMistake(message, path) : usageError(`--cwd ${file}: not a folder`)
}

const oneLine = (doc: HelpDoc.HelpDoc) => stripVTControlCharacters(HelpDoc.toAnsiText(doc)).replace(/\s+/g, " ").trim()

/**
 * Runs the program on checked argv. @effect/cli prints its own validation errors with blank lines
 * around them; they become one `CliError` line instead, printed with the others.
 */
const program = (argv: ReadonlyArray<string>) => {
  const [node = "node", script = "alisio", ...words] = argv
  const help = Help.requested(commandLine, words)
  if (Option.isSome(help)) {
    return Either.match(help.value, {
      onLeft: (mistake) => Effect.fail(usageMistake(mistake.message, mistake.path)),
      onRight: (path) =>
        Effect.sync(() => process.stdout.write(Help.render(commandLine, path, Help.layoutFor(process.stdout))))
    })
  }
  return Either.match(CommandLine.check(commandLine, words), {
    onLeft: (mistake) => Effect.fail(usageMistake(mistake.message, mistake.path)),
    onRight: (checked) =>
      Console.consoleWith((console) =>
        cli([node, script, ...checked.argv]).pipe(
          Console.withConsole({ ...console, error: () => Effect.void }),
          Effect.catchIf(ValidationError.isValidationError, (error) =>
            Effect.fail(validationMistake(error, checked.path))
          )
        )
      )
  })
}

/** The edge: parses argv, runs the command, exits with its code (Edge.ts). */
export const main = (argv: ReadonlyArray<string>): void => runAtEdge(program(argv), NodeContext.layer)
