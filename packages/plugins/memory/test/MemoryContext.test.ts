import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { memoryPlugin } from "@alisio/plugin-memory"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { type PluginSession, startPluginSession, tempDir } from "./support/pluginSession.js"

const filler = (i: number) =>
  `Note ${i} about the build: ${"the pipeline caches dependencies per lockfile hash and rebuilds on change. ".repeat(3)}`

/** A state folder, two workspaces, and 40 memories in the first one: one about the prompt, the oldest. */
const seeded = Effect.gen(function* () {
  const root = yield* tempDir("memory-context")
  const projectA = join(root, "project-a")
  const projectB = join(root, "project-b")
  mkdirSync(projectA)
  mkdirSync(projectB)
  const stateDir = join(root, "state")
  yield* Effect.scoped(
    Effect.gen(function* () {
      const memory = yield* startPluginSession(memoryPlugin, { stateDir })
      yield* memory.callTool(
        "memory_save",
        {
          title: "Flaky websocket test",
          content: "The websocket test is flaky on CI: it needs a longer handshake timeout."
        },
        projectA
      )
      for (let i = 1; i < 40; i++) {
        yield* TestClock.adjust("1 hour")
        yield* memory.callTool("memory_save", { content: filler(i) }, projectA)
      }
    })
  )
  return { stateDir, projectA, projectB }
})

const injected = (memory: PluginSession, cwd: string, prompt: string) => memory.contextFor(cwd, prompt)

describe("memory plugin context", () => {
  it.scoped("PL-5 the memories injected at session start stay within the token budget, most relevant first", () =>
    Effect.gen(function* () {
      const { stateDir, projectA } = yield* seeded
      for (const budget of [60, 100, 300]) {
        const memory = yield* startPluginSession(memoryPlugin, { stateDir, config: { injectBudgetTokens: budget } })
        const text = yield* injected(memory, projectA, "why is the websocket test flaky?")
        assert.isAtMost(text.length, budget * 4, `budget ${budget}`)
        const lines = text.split("\n")
        assert.match(lines[0]!, /^Memories saved in earlier sessions/)
        assert.match(lines[1]!, /^- #1 Flaky websocket test \[note, 1 day ago\]: The websocket test is flaky/)
      }
      const byDefault = yield* startPluginSession(memoryPlugin, { stateDir })
      const text = yield* injected(byDefault, projectA, "why is the websocket test flaky?")
      assert.isAtMost(text.length, 800 * 4)
      assert.isAbove(text.split("\n").length, 5, "the default budget holds several memories")
      // The rest are the most recent ones.
      assert.match(text.split("\n")[2]!, /^- #40 /)
    })
  )

  it.scoped("PL-5 nothing is injected with a zero budget, or in a project without memories", () =>
    Effect.gen(function* () {
      const { stateDir, projectA, projectB } = yield* seeded
      const none = yield* startPluginSession(memoryPlugin, { stateDir, config: { injectBudgetTokens: 0 } })
      assert.strictEqual(yield* injected(none, projectA, "websocket"), "")
      const memory = yield* startPluginSession(memoryPlugin, { stateDir })
      assert.strictEqual(yield* injected(memory, projectB, "websocket"), "")
      yield* memory.callTool("memory_save", { content: "Answer in British English.", scope: "personal" }, projectA)
      assert.include(yield* injected(memory, projectB, "hello"), "Answer in British English.")
    })
  )
})
