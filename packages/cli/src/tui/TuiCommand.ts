// `alisio` with no command (CLI-1, UI-1): the interactive UI in the workspace. The editor is up
// before the runtime is composed (composed once, as for `run`, with the UI's Interaction and
// PluginUi), so typing starts at once; the first message waits for the runtime if it must.

import * as path from "node:path"
import * as Paths from "@alisio/runtime/Paths"
import { matchesKey, ProcessTerminal } from "@earendil-works/pi-tui"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import { usageError } from "../CliError.js"
import { limitsOf } from "../LimitFlags.js"
import type { TuiFlags } from "../main.js"
import { type CommandEntry, Completion } from "./Completion.js"
import type { Intent } from "./Conversation.js"
import { FileIndex } from "./FileIndex.js"
import { Grants } from "./Grants.js"
import { historyFile, openHistory } from "./History.js"
import { PluginSink } from "./Panels.js"
import { RunView } from "./RunView.js"
import { Screen } from "./Screen.js"
import { colorFor, makeTheme, unicodeFor } from "./Theme.js"
import * as TuiInteraction from "./TuiInteraction.js"
import { showWaits } from "./Waits.js"

const EXIT_WINDOW_MS = 2_000

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
    const cwd = path.resolve(Option.isSome(flags.cwd) ? flags.cwd.value : process.cwd())
    const paths = yield* Paths.make
    const color = colorFor(true)
    const unicode = unicodeFor()
    const theme = makeTheme({ color, unicode })
    const screen = new Screen(new ProcessTerminal(), theme)
    const intents = yield* Queue.unbounded<Intent>()
    const board = new TuiInteraction.WaitBoard()
    const grants = new Grants()
    const sink = new PluginSink()
    const history = openHistory(historyFile(paths.stateHome, cwd))
    for (const entry of history.entries) screen.editor.addToHistory(entry)
    screen.status.update((s) => {
      s.readOnly = flags.readOnly
    })

    let commands: ReadonlyArray<CommandEntry> = []
    screen.editor.setAutocompleteProvider(new Completion(() => commands, new FileIndex(cwd), cwd))
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

    const view = new RunView(screen, () => 0)
    yield* ownTerminal(screen)
    yield* showWaits(screen, board, grants)

    const { runSession } = yield* Effect.promise(() => import("./Session.js"))
    yield* runSession({
      flags,
      limits,
      screen,
      view,
      board,
      grants,
      sink,
      history,
      intents,
      busy,
      setCommands: (entries) => {
        commands = entries
      },
      color,
      unicode
    })
  }).pipe(Effect.scoped)
