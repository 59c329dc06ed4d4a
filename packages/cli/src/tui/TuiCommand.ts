// `alisio` with no command (CLI-1, UI-1): the interactive UI in the workspace. The first frame
// needs only pi-tui's core, the screen and the keys (Front.ts); the editor is up before the rest of
// the UI loads and the runtime is composed (once, as for `run`, with the UI's Interaction and
// PluginUi), so typing starts at once; a message sent meanwhile waits for the runtime.

import * as path from "node:path"
import * as Paths from "@alisio/runtime/Paths"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { usageError } from "../CliError.js"
import type { TuiFlags } from "../Flags.js"
import { limitsOf } from "../LimitFlags.js"
import { checkWorkspace } from "../WorkspaceFlag.js"
import { makeFront } from "./Front.js"
import { historyFile, openHistory } from "./History.js"
import { mark } from "./LaunchTrace.js"
import { ProcessTerminal } from "./PiTuiCore.js"
import { Screen } from "./Screen.js"
import { colorFor, makeTheme, unicodeFor } from "./Theme.js"

/** Keys typed within this long of an approval or a question opening (and of each other) still go to the editor. */
export const DIALOG_GRACE_MS = 300

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
        screen.leave()
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
      // The first frame now, not on the next turn of the event loop: what loads next would delay it.
      screen.tui.renderNow()
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
    mark("ui-loaded")
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
    if (Option.isSome(flags.cwd)) yield* checkWorkspace(flags.cwd.value, cwd)
    const paths = yield* Paths.make
    const session = flags.session
    const resumed = Option.isSome(session)
      ? yield* Effect.flatMap(
          Effect.promise(() => import("../SessionChoice.js")),
          ({ sessionToResume }) => sessionToResume(paths, session.value, { cwd, cwdGiven: Option.isSome(flags.cwd) })
        )
      : undefined
    const color = colorFor(true)
    const unicode = unicodeFor()
    const theme = makeTheme({ color, unicode })
    const screen = new Screen(new ProcessTerminal(), theme, { dialogGraceMs: DIALOG_GRACE_MS })
    screen.status.update((s) => {
      s.readOnly = flags.readOnly
    })
    const front = yield* makeFront(screen)
    const history = openHistory(historyFile(paths.stateHome, cwd))
    for (const entry of history.entries) screen.editor.addToHistory(entry)
    yield* ownTerminal(screen)
    mark("editor-ready")

    // The rest (completion, the waits, the run view, the runtime) loads behind the editor; Ctrl-D
    // meanwhile stops it and exits.
    const conversation = Effect.flatMap(
      Effect.promise(() => import("./Session.js")),
      ({ runSession }) => runSession({ flags, limits, screen, front, history, cwd, resumed, color, unicode })
    )
    yield* Effect.raceFirst(conversation, Deferred.await(front.exitedEarly))
  }).pipe(Effect.scoped)
