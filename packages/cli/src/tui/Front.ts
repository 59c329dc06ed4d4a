// What the keys do from the first frame on, before the runtime is composed and after: the editor
// takes text at once; a message sent before the runtime is ready shows as queued and waits on the
// intent queue for it (nothing typed is lost); Ctrl-D or Ctrl-C twice then exits without waiting
// for the runtime (SQLite, plugins, MCP servers). Loaded with the first frame: pi-tui's core only.
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type { Intent } from "./Conversation.js"
import type { UserEntry } from "./Entries.js"
import { matchesKey } from "./PiTuiCore.js"
import type { Screen } from "./Screen.js"

const EXIT_WINDOW_MS = 2_000

export interface Front {
  /** Everything the screen asks of the conversation, in order (the session's loop takes them). */
  readonly intents: Queue.Queue<Intent>
  /** Whether a run (or a command) is going on, for the keys. */
  readonly busy: { now: boolean }
  /** Done when the person exits before the runtime is ready: the launch stops composing it. */
  readonly exitedEarly: Deferred.Deferred<void>
  /** Set by the session once it has a view: Ctrl-O opens or folds the reasoning and the tool cards. */
  toggleExpanded: () => void
  /** The runtime is ready: the messages shown queued leave the queue region, the conversation shows them as it sends them. */
  readonly ready: () => void
}

export const makeFront = (screen: Screen) =>
  Effect.gen(function* () {
    const intents = yield* Queue.unbounded<Intent>()
    const exitedEarly = yield* Deferred.make<void>()
    let early: Array<UserEntry> | undefined = []
    const exit = () => {
      if (early !== undefined) Deferred.unsafeDone(exitedEarly, Effect.void)
      Queue.unsafeOffer(intents, { _tag: "Exit" })
    }
    const front: Front = {
      intents,
      busy: { now: false },
      exitedEarly,
      toggleExpanded: () => {},
      ready: () => {
        for (const entry of early ?? []) screen.unqueue(entry)
        early = undefined
      }
    }

    screen.editor.onSubmit = (typed) => {
      const text = screen.editor.restoreTabs(typed)
      screen.editor.addToHistory(text)
      if (early !== undefined && text.trim() !== "") early.push(screen.queue(text))
      Queue.unsafeOffer(intents, { _tag: "Submit", text })
    }

    // Keys that act whatever has the focus; the rest go to the editor or the open dialog.
    const busy = front.busy
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
        if (now - lastCtrlC < EXIT_WINDOW_MS) exit()
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
        exit()
        return { consume: true }
      }
      if (matchesKey(data, "escape") && busy.now && !screen.dialogOpen && !screen.editor.isShowingAutocomplete()) {
        Queue.unsafeOffer(intents, { _tag: "Cancel" })
        return { consume: true }
      }
      if (matchesKey(data, "ctrl+o")) {
        if (!screen.toggleDialogExpanded()) front.toggleExpanded()
        return { consume: true }
      }
      return undefined
    })
    return front
  })
