// A run interrupted while it waits for its MCP servers to start, before its first request, keeps
// its prompt: the session is stored with it and the run ends cancelled, as a Ctrl-C a moment later
// would end it (CLI-2, MCP-1).
import * as Fake from "@alisio/providers/FakeProvider"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { baseOptions } from "./helpers/harness.js"
import { mcpWorld, stdioFixture } from "./helpers/mcp.js"

describe("a run interrupted while its MCP servers start", () => {
  it.scopedLive(
    "CLI-2 MCP-1 keeps the prompt: the session is stored with it, the run ends cancelled, no request was sent",
    () =>
      Effect.gen(function* () {
        const slow = stdioFixture({ env: { MCP_FIXTURE_SLOW_FIRST_START_MS: "60000" } })
        const { world, context } = yield* mcpWorld({ slow }, { script: [Fake.answer("never asked")] })
        yield* Effect.gen(function* () {
          const seen: Array<string> = []
          const running = yield* Effect.fork(
            (yield* Runner).run({
              ...baseOptions,
              prompt: "the prompt typed with care",
              limits: { maxContextTokens: 100_000 },
              onEvent: (event) => Effect.sync(() => void seen.push(event.type))
            })
          )
          while (world.trace("starts.txt").length === 0) yield* Effect.sleep("20 millis")
          yield* Fiber.interrupt(running)

          assert.deepStrictEqual(seen, ["run_started", "message", "run_cancelled"])
          const store = yield* SessionStore
          const [session, ...others] = yield* store.sessions()
          assert.isDefined(session)
          assert.lengthOf(others, 0)
          const messages = yield* store.messages(session!.id)
          assert.deepStrictEqual(
            messages.map(({ message }) => message.role),
            ["user"]
          )
          assert.include(JSON.stringify(messages[0]!.message.content), "the prompt typed with care")
          assert.deepStrictEqual(
            (yield* store.runs!(session!.id)).map((run) => run.status),
            ["cancelled"]
          )
          assert.deepStrictEqual(yield* (yield* Fake.FakeProvider).requests, [])
        }).pipe(Effect.provide(context))
      }),
    60_000
  )
})
