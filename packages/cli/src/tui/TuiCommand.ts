// `alisio` with no command (CLI-1, UI-1): the interactive UI in the workspace. The editor is up
// before the runtime is composed (composed once, as for `run`, with the UI's Interaction and
// PluginUi), so typing starts at once; the first message waits for the runtime if it must.
import type { Limits } from "@alisio/domain/Limits"
import { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import { Extensions } from "@alisio/runtime/Extensions"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { matchesKey, ProcessTerminal } from "@earendil-works/pi-tui"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import { loadSetup, registerProviders, tuiRuntimeLayer } from "../App.js"
import { CliError, ExitCode, usageError } from "../CliError.js"
import type { TuiFlags } from "../main.js"
import type { PluginFlags } from "../Plugins.js"
import { findSession } from "../ShortIds.js"
import { catalogLayer } from "../Slash.js"
import { type CommandEntry, Completion } from "./Completion.js"
import { type Intent, makeConversation } from "./Conversation.js"
import { FileIndex } from "./FileIndex.js"
import { Grants } from "./Grants.js"
import { historyFile, openHistory } from "./History.js"
import { PluginSink, pluginUiLayer } from "./Panels.js"
import { RunView } from "./RunView.js"
import { Screen } from "./Screen.js"
import { colorFor, makeTheme, unicodeFor } from "./Theme.js"
import * as TuiInteraction from "./TuiInteraction.js"
import { showWaits } from "./Waits.js"

const limitsOf = (flags: TuiFlags): Limits => {
  const pick = <K extends keyof Limits>(key: K, value: Option.Option<number>) =>
    Option.isSome(value) ? { [key]: value.value } : {}
  return {
    ...pick("maxTurns", flags.maxTurns),
    ...pick("timeoutMs", flags.timeout),
    ...pick("firstTokenTimeoutMs", flags.firstTokenTimeout),
    ...pick("firstTokenRetries", flags.firstTokenRetries),
    ...pick("streamIdleTimeoutMs", flags.streamIdleTimeout),
    ...pick("maxOutputTokens", flags.maxOutputTokens),
    ...pick("truncationRecoveries", flags.truncationRecoveries)
  }
}

const EXIT_WINDOW_MS = 2_000
const TICK = "100 millis"

/**
 * Owns the terminal for the life of the scope: raw mode and the screen on acquire; on release (a
 * normal exit, an interruption by SIGTERM or SIGHUP, a failure) the screen stops and the terminal
 * is given back as it was. Anything written to stderr meanwhile (warnings of the layers) becomes
 * a notice instead of tearing the screen; a crash in a callback stops the screen before the error
 * is printed, and cancels the run like a hang-up, so it is recorded cancelled.
 */
const ownTerminal = (screen: Screen) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const write = process.stderr.write.bind(process.stderr)
      let stopped = false
      const seen = new Set<string>()
      const stop = () => {
        if (stopped) return
        stopped = true
        process.stderr.write = write
        // The conversation stays in the scrollback; the editor and the status line go.
        screen.tui.removeChild(screen.input)
        screen.tui.removeChild(screen.queued)
        screen.tui.removeChild(screen.status)
        screen.tui.renderNow()
        screen.tui.stop()
      }
      process.stderr.write = ((chunk: string | Uint8Array) => {
        const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
        for (const raw of text.split("\n")) {
          const line = raw.replace(/^alisio: /, "").trimEnd()
          // The same note again (the model chosen, at each message) says nothing new.
          if (line === "" || seen.has(line)) continue
          seen.add(line)
          screen.notice(line, /warning|error/i.test(line) ? "warning" : "info")
        }
        return true
      }) as typeof process.stderr.write
      const crash = (error: unknown) => {
        stop()
        write(
          `alisio: internal error in the interactive interface\n${error instanceof Error ? error.stack : String(error)}\n`
        )
        process.exitCode = 1
        process.emit("SIGTERM", "SIGTERM")
      }
      process.on("uncaughtException", crash)
      screen.tui.start()
      return { stop, crash }
    }),
    ({ crash, stop }) =>
      Effect.sync(() => {
        process.off("uncaughtException", crash)
        stop()
      })
  )

export const tuiCommand = (flags: TuiFlags) =>
  Effect.gen(function* () {
    if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
      return yield* usageError(
        'the interactive interface needs a terminal (stdin and stdout); for scripts and pipes use `alisio run "task"` (see alisio run --help)'
      )
    }
    if (flags.continue && Option.isSome(flags.session)) {
      return yield* usageError(
        "--continue and --session both choose the session to resume: give one of them (see alisio --help)"
      )
    }
    const limits = limitsOf(flags)
    const setup = yield* loadSetup({
      ...(Option.isSome(flags.cwd) ? { cwd: flags.cwd.value } : {}),
      trustProject: flags.trustProject,
      flags: { limits }
    })
    const color = colorFor(true)
    const unicode = unicodeFor()
    const theme = makeTheme({ color, unicode })
    const screen = new Screen(new ProcessTerminal(), theme)
    const intents = yield* Queue.unbounded<Intent>()
    const board = new TuiInteraction.WaitBoard()
    const grants = new Grants()
    const sink = new PluginSink()
    const history = openHistory(historyFile(setup.paths.stateHome, setup.cwd))
    for (const entry of history.entries) screen.editor.addToHistory(entry)
    screen.status.update((s) => {
      s.readOnly = flags.readOnly
    })

    let commands: ReadonlyArray<CommandEntry> = []
    screen.editor.setAutocompleteProvider(new Completion(() => commands, new FileIndex(setup.cwd), setup.cwd))
    screen.editor.onSubmit = (text) => {
      screen.editor.addToHistory(text)
      Queue.unsafeOffer(intents, { _tag: "Submit", text })
    }

    // Keys that act whatever has the focus; the rest go to the editor or the open dialog.
    const busy = { now: false }
    let lastCtrlC = Number.NEGATIVE_INFINITY
    screen.tui.addInputListener((data) => {
      if (matchesKey(data, "ctrl+c")) {
        if (busy.now) {
          Queue.unsafeOffer(intents, { _tag: "Cancel" })
          return { consume: true }
        }
        if (screen.dialogOpen) return undefined
        if (screen.editor.getText() !== "") {
          screen.editor.setText("")
          return { consume: true }
        }
        const now = performance.now()
        if (now - lastCtrlC < EXIT_WINDOW_MS) Queue.unsafeOffer(intents, { _tag: "Exit" })
        else {
          lastCtrlC = now
          screen.status.update((s) => {
            s.hint = "Press Ctrl-C again to exit"
          })
        }
        return { consume: true }
      }
      if (screen.status.state.hint !== undefined && !busy.now) {
        screen.status.update((s) => {
          s.hint = undefined
        })
      }
      if (matchesKey(data, "ctrl+d") && !screen.dialogOpen && screen.editor.getText() === "") {
        Queue.unsafeOffer(intents, { _tag: "Exit" })
        return { consume: true }
      }
      if (matchesKey(data, "escape") && busy.now && !screen.dialogOpen && !screen.editor.isShowingAutocomplete()) {
        Queue.unsafeOffer(intents, { _tag: "Cancel" })
        return { consume: true }
      }
      if (matchesKey(data, "ctrl+o")) {
        view.toggleExpanded()
        return { consume: true }
      }
      return undefined
    })

    const view = new RunView(screen, () => clockNow)
    let clockNow = yield* Clock.currentTimeMillis
    yield* ownTerminal(screen)
    yield* showWaits(screen, board, grants)

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
      yield* registerProviders(setup)
      const store = yield* SessionStore
      if (store.interruptRuns !== undefined) yield* store.interruptRuns()
      const catalog = yield* CommandCatalog
      commands = (yield* catalog.list("tui")).filter((listing) => listing.shadowedBy === undefined)
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
      let start: string | undefined
      if (Option.isSome(flags.session)) start = (yield* findSession(store, flags.session.value)).id
      else if (flags.continue) {
        const latest = yield* store.latestSession(setup.cwd)
        if (Option.isSome(latest)) start = latest.value.id
        else screen.notice("No earlier session in this directory; this is a new one.")
      }
      yield* conversation.switchTo(start as Parameters<typeof conversation.switchTo>[0])
      const first = flags.prompt.join(" ").trim()
      if (first !== "") yield* Queue.offer(intents, { _tag: "Submit", text: first })

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
  }).pipe(Effect.scoped)
