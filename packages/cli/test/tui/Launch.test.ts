// The launch: the editor takes keys from the first frame, before the runtime is composed. What is
// typed then stays in the editor, a message sent then waits (shown queued) for the conversation,
// and Ctrl-D exits without waiting for the runtime.
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type { Intent } from "../../src/tui/Conversation.js"
import { type Front, makeFront } from "../../src/tui/Front.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

/** A started screen and its keys on a virtual terminal, as the launch has them before the runtime is ready. */
const launched = async (body: (screen: Screen, front: Front, terminal: VirtualTerminal) => Promise<void>) => {
  const terminal = new VirtualTerminal(60, 16)
  const screen = new Screen(terminal, makeTheme({ color: false }))
  const front = Effect.runSync(makeFront(screen))
  screen.tui.start()
  try {
    await body(screen, front, terminal)
  } finally {
    screen.tui.stop()
  }
}

const visible = async (terminal: VirtualTerminal) => {
  await settle()
  return (await terminal.screen()).join("\n")
}

const taken = (front: Front): ReadonlyArray<Intent> =>
  Effect.runSync(Queue.takeAll(front.intents)).pipe((all) => [...all])

const exitedEarly = (front: Front) => Option.isSome(Effect.runSync(Deferred.poll(front.exitedEarly)))

describe("TUI launch", () => {
  it("UI-1 keys typed before the runtime is ready reach the editor; a message sent then shows queued and reaches the conversation, in order, once it is ready", async () => {
    await launched(async (screen, front, terminal) => {
      for (const key of "say hello") terminal.send(key)
      terminal.send("\r")
      for (const key of "and then this") terminal.send(key)
      terminal.send("\r")
      for (const key of "a draft") terminal.send(key)
      assert.strictEqual(screen.editor.getText(), "a draft", "nothing typed is lost")
      const waiting = await visible(terminal)
      assert.include(waiting, "say hello", "a message sent early shows while it waits")
      assert.include(waiting, "and then this")
      // The runtime is ready: the queued lines go, the conversation takes the messages in order.
      front.ready()
      const ready = await visible(terminal)
      assert.notInclude(ready, "say hello", "the conversation shows it as it sends it")
      assert.include(ready, "a draft")
      assert.deepStrictEqual(taken(front), [
        { _tag: "Submit", text: "say hello" },
        { _tag: "Submit", text: "and then this" }
      ])
      // From now on a message goes straight to the conversation, without a queued line of the launch's.
      terminal.send("\r")
      assert.deepStrictEqual(taken(front), [{ _tag: "Submit", text: "a draft" }])
      assert.strictEqual(screen.queued.children.length, 0)
      terminal.send("\x1b[A")
      assert.strictEqual(screen.editor.getText(), "a draft", "↑ brings back what was sent, early or not")
    })
  })

  it("UI-1 Ctrl-D on an empty editor before the runtime is ready exits without waiting for it; once it is ready the conversation exits", async () => {
    await launched(async (_screen, front, terminal) => {
      terminal.send("x")
      terminal.send("\x04")
      assert.isFalse(exitedEarly(front), "Ctrl-D with text in the editor does not exit")
      terminal.send("\x7f")
      terminal.send("\x04")
      assert.isTrue(exitedEarly(front))
      assert.deepStrictEqual(taken(front), [{ _tag: "Exit" }])
    })
    await launched(async (_screen, front, terminal) => {
      terminal.send("\x03")
      terminal.send("\x03")
      assert.isTrue(exitedEarly(front), "Ctrl-C twice exits too")
    })
    await launched(async (_screen, front, terminal) => {
      front.ready()
      terminal.send("\x04")
      assert.isFalse(exitedEarly(front), "the conversation ends the session itself")
      assert.deepStrictEqual(taken(front), [{ _tag: "Exit" }])
    })
  })
})
