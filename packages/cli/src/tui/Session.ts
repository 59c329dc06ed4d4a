// The runtime side of the interactive UI, imported once the first frame is drawn (so the editor
// takes keys while SQLite, the providers and the plugins load): the completion, the
// run view and the waits' dialogs, the setup, the runtime composed once as for `run` (with the UI's
// Interaction and PluginUi), the catalog, and the loop over the screen's intents.
import type { SessionId } from "@alisio/domain/Ids"
import type { Limits } from "@alisio/domain/Limits"
import { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import { Extensions } from "@alisio/runtime/Extensions"
import { McpServers } from "@alisio/runtime/McpServers"
import { SessionStore } from "@alisio/runtime/SessionStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import { loadSetup, registerProviders, tuiRuntimeLayer } from "../App.js"
import { CliError, ExitCode } from "../CliError.js"
import type { TuiFlags } from "../Flags.js"
import type { PluginFlags } from "../Plugins.js"
import { shortId } from "../ShortIds.js"
import { catalogLayer } from "../Slash.js"
import { CommandSource, Completion, type ResourceEntry } from "./Completion.js"
import { makeConversation } from "./Conversation.js"
import { FileIndex } from "./FileIndex.js"
import type { Front } from "./Front.js"
import { Grants } from "./Grants.js"
import type { History } from "./History.js"
import { mark } from "./LaunchTrace.js"
import { PluginSink, pluginUiLayer } from "./Panels.js"
import { RunView } from "./RunView.js"
import type { Screen } from "./Screen.js"
import * as TuiInteraction from "./TuiInteraction.js"
import { showWaits } from "./Waits.js"

const TICK = "100 millis"
// How often the `@` completion's MCP resources are read again: from the servers' cached lists,
// listed anew only when a server started or said its list changed.
const RESOURCES_EVERY = "1 second"

export interface SessionInput {
  readonly flags: TuiFlags
  readonly limits: Limits
  readonly screen: Screen
  readonly front: Front
  readonly history: History
  /** The workspace, absolute. */
  readonly cwd: string
  /** The session `-s` named, found and checked before the first frame (and the folder it left, if `--cwd` moved it). */
  readonly resumed: { readonly id: SessionId; readonly movedFrom: string | undefined } | undefined
  readonly color: boolean
  readonly unicode: boolean
}

export const runSession = (input: SessionInput) =>
  Effect.gen(function* () {
    const { flags, limits, screen, front, history, cwd, resumed, color, unicode } = input
    const { intents, busy } = front
    const commands = new CommandSource()
    let resources: ReadonlyArray<ResourceEntry> = []
    screen.editor.setAutocompleteProvider(
      new Completion(
        () => commands.current(),
        new FileIndex(cwd),
        cwd,
        () => resources
      )
    )
    const board = new TuiInteraction.WaitBoard()
    const grants = new Grants()
    const sink = new PluginSink()
    const view = new RunView(screen, () => 0)
    front.toggleExpanded = () => view.toggleExpanded()
    yield* showWaits(screen, board, grants)

    const setup = yield* loadSetup({
      ...(Option.isSome(flags.cwd) ? { cwd: flags.cwd.value } : {}),
      trustProject: flags.trustProject,
      projectMcp: true,
      flags: { limits }
    })
    let clockNow = yield* Clock.currentTimeMillis
    view.now = () => clockNow
    const plugins: PluginFlags = {
      plugins: flags.plugin,
      disabled: flags.disablePlugin,
      readOnly: flags.readOnly,
      trustProject: flags.trustProject
    }
    const program = Effect.gen(function* () {
      sink.attach({
        notice: (text, level) => screen.notice(text, level),
        panel: (panel) => {
          screen.panels.set(panel)
          screen.tui.requestRender()
        }
      })
      const extensions = yield* Extensions
      const startup = yield* extensions.renderStartup({
        columns: screen.tui.terminal.columns,
        rows: Math.max(4, Math.floor(screen.tui.terminal.rows / 2)),
        color,
        unicode
      })
      screen.setHeader(startup.lines)
      yield* registerProviders(setup, (line) => screen.notice(line, "warning"))
      const store = yield* SessionStore
      if (store.interruptRuns !== undefined) yield* store.interruptRuns()
      const catalog = yield* CommandCatalog
      const listCommands = Effect.map(catalog.list("tui"), (listings) =>
        listings.filter((listing) => listing.shadowedBy === undefined)
      )
      const listed = yield* listCommands
      const runtime = yield* Effect.runtime<never>()
      commands.ready(listed, () => Runtime.runPromise(runtime, listCommands))
      const conversation = yield* makeConversation({
        setup,
        screen,
        view,
        grants,
        history,
        intents,
        readOnly: flags.readOnly,
        yes: flags.yes,
        limits,
        model: flags.model
      })
      let start: SessionId | undefined
      if (resumed !== undefined) start = resumed.id
      else if (flags.continue) {
        const latest = yield* store.latestSession(setup.cwd)
        if (Option.isSome(latest)) start = latest.value.id
        else screen.notice("No earlier session in this directory; this is a new one.")
      }
      yield* conversation.switchTo(start)
      if (resumed?.movedFrom !== undefined) {
        screen.notice(`Session ${shortId(resumed.id)} moved from ${resumed.movedFrom} to this folder.`)
      }
      const first = flags.prompt.join(" ").trim()
      if (first !== "") yield* Queue.offer(intents, { _tag: "Submit", text: first })

      // The resources of the running MCP servers, for `@` (MCP-1): kept apart from typing.
      const mcp = yield* McpServers
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.map(mcp.resources, (list) => {
            resources = list
          }),
          Schedule.spaced(RESOURCES_EVERY)
        )
      )

      // The spinner, the seconds and the active time (which stands still while a wait is open: LIM-1).
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const elapsed = now - clockNow
            clockNow = now
            busy.now = conversation.state.busy
            if (busy.now && board.size === 0) screen.status.state.activeMs += elapsed
            screen.status.update((s) => {
              s.waits = board.size
            })
            if (screen.status.tick(now)) screen.tui.requestRender()
          }),
          Schedule.spaced(TICK)
        )
      )
      front.ready()
      mark("runtime-ready")
      let going = true
      while (going) {
        const intent = yield* Queue.take(intents)
        going = yield* conversation.handleIntent(intent)
        busy.now = conversation.state.busy
      }
    })

    yield* program.pipe(
      Effect.scoped,
      Effect.mapError((error) =>
        error._tag === "CliError" ? error : new CliError({ message: error.message, exitCode: ExitCode.failed })
      ),
      Effect.provide(
        catalogLayer(setup, flags.trustProject).pipe(
          Layer.provideMerge(
            tuiRuntimeLayer(setup, {
              interaction: TuiInteraction.layer(board, { approveAll: flags.yes, grants }),
              pluginUi: pluginUiLayer(sink),
              plugins
            })
          )
        )
      )
    )
  })
