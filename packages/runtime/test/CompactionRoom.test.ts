// What a request has room for (CTX-1): compaction in a run keeps the tool results the model has not
// answered yet (a large result past the share of the room kept verbatim is still sent whole while
// the request fits, so the model does not read the same file again and again), and a window too
// small for the system prompt and the tools says so, with the remedy.

import { ToolCallId } from "@alisio/domain/Ids"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import type { Message } from "@alisio/domain/Message"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import { SUMMARY_SYSTEM_MARK } from "@alisio/runtime/Compaction"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { planCut } from "../src/internal/compaction/plan.js"
import { assertCallsWithResults } from "./helpers/compaction.js"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "./helpers/harness.js"
import { said, user } from "./helpers/messages.js"

const isSummary = (request: ModelRequest) => request.system?.startsWith(SUMMARY_SYSTEM_MARK) === true

/** 24 000 characters: about 6 000 tokens, more than the 4 000 kept verbatim of a 20 000-token window. */
const FILE = `${"R".repeat(23_990)} end-of-file`

const readBig = defineTool({
  name: "read_big",
  description: "Reads a large file.",
  effect: "read",
  input: Schema.Struct({}),
  run: () => Effect.succeed(textResult(FILE))
})

const toolTexts = (messages: ReadonlyArray<Message>) =>
  messages.flatMap((message) =>
    message.role === "tool" ? message.content.flatMap((part) => (part._tag === "text" ? [part.text] : [])) : []
  )

describe("CTX-1 what a request has room for", () => {
  it.effect("CTX-1 a large tool result the model has not answered is sent whole after the summary", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const session = yield* store.createSession({ cwd: "/tmp", status: "completed" })
      const seedRun = yield* store.beginRun!({
        id: `seed-${session.id}` as never,
        sessionId: session.id,
        model: "fake-model",
        provider: "fake",
        owner: { pid: process.pid, token: "seed" }
      })
      yield* store.endRun!(seedRun.run.id, { status: "completed" })
      yield* store.appendMessages(session.id, [user("earlier task"), said("e".repeat(12_000))], seedRun.run.id)
      const events = yield* collect({
        ...baseOptions,
        sessionId: session.id,
        prompt: "read the big file",
        tools: ["read_big"],
        limits: { maxContextTokens: 20_000 }
      })
      assertContract(events)
      assert.strictEqual(ofType(events, "compaction_completed").length, 1)
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      assert.deepStrictEqual(requests.map(isSummary), [false, true, false])
      const after = requests[2]!
      assertCallsWithResults(after.messages)
      assert.deepStrictEqual(toolTexts(after.messages), [FILE])
      assert.notInclude(JSON.stringify(after.messages), "e".repeat(1_000), "the older turns were summarised")
    }).pipe(
      Effect.provide(
        runnerLayer({
          tools: [readBig],
          script: [
            [...Fake.toolCall("call-1", "read_big", {}), Fake.finish("tool_calls")],
            Fake.answer("Summary: an earlier task was done."),
            Fake.answer("read it")
          ]
        })
      )
    )
  )

  it("CTX-1 planCut keeps a last unit past `keep` within `lastRoom`, and summarises it when nothing older is left", () => {
    const messages: ReadonlyArray<Message> = [
      user("old"),
      said("o".repeat(400)),
      user("prompt"),
      { role: "assistant", content: [{ _tag: "tool_call", id: ToolCallId.make("c1"), name: "read", arguments: "{}" }] },
      {
        role: "tool",
        toolCallId: ToolCallId.make("c1"),
        toolName: "read",
        content: [{ _tag: "text", text: "r".repeat(700) }],
        isError: false
      }
    ]
    const history = messages.map((message, index) => ({ position: index + 1, message }))
    const tokensOf = (entry: (typeof history)[number]) =>
      entry.message.role === "system"
        ? 0
        : entry.message.content.reduce((sum, part) => sum + (part._tag === "text" ? part.text.length : 0), 0)
    // Units: [old], [o…], [prompt], [call, result]; the prompt is pinned (sent whole anyway).
    assert.strictEqual(planCut(history, 0, 100, tokensOf), 5)
    assert.strictEqual(planCut(history, 0, 100, tokensOf, undefined, 1_000), 3)
    assert.strictEqual(planCut(history, 0, 100, tokensOf, undefined, 500), 5)
    // Only the current prompt is older than the last unit: the unit is summarised as before.
    assert.strictEqual(planCut(history, 2, 100, tokensOf, undefined, 1_000), 5)
  })

  it.effect(
    "CTX-1 CLI-1 a window too small for the system prompt and the tools refuses the prompt before anything is stored, naming the remedy",
    () =>
      Effect.gen(function* () {
        const runner = yield* Runner
        const error = yield* Effect.flip(
          runner.run({ ...baseOptions, system: "s".repeat(8_000), tools: [], limits: { maxContextTokens: 2_048 } })
        )
        assert.strictEqual(error._tag, "PromptTooLargeError")
        assert.match(
          error.message,
          /^the context window of fake-model \(2048 tokens, limits\.maxContextTokens\) is too small for this run: the system prompt and the tool definitions alone take about 20\d\d tokens, and 1024 are left for a request; nothing was stored: raise --max-context-tokens \(limits\.maxContextTokens\)$/
        )
        assert.deepStrictEqual(yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.sessions()), [])
        assert.strictEqual((yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)).length, 0)
      }).pipe(Effect.provide(runnerLayer({ script: [] })))
  )
})
