// The real runner driven by the OpenAI-compatible adapter against a local HTTP server (PRV-2):
// the model calls a tool, gets its result back, and answers.
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { chunk, done, sse as sseEvents } from "../packages/providers/test/support/openAiCompatible.js"
import * as SseServer from "../packages/providers/test/support/SseServer.js"
import { echoTool, pingTool } from "../packages/runtime/test/helpers/tools.js"

/** An SSE body of chunks, ended as servers end it. */
const sse = (...chunks: ReadonlyArray<unknown>): string => sseEvents(...chunks, done)

const usage = (input: number, output: number) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  choices: [],
  usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
})

describe("OpenAI-compatible provider with the runner", () => {
  it.scopedLive("PRV-2 the runner completes a tool-calling task through the adapter and a real server", () =>
    Effect.gen(function* () {
      const server = yield* SseServer.sequence(
        {
          body: sse(
            chunk({ role: "assistant", content: "" }),
            chunk({
              tool_calls: [{ index: 0, id: "call_echo", type: "function", function: { name: "echo", arguments: "" } }]
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '"hello"}' } }] }),
            chunk({}, "tool_calls"),
            usage(30, 12)
          ),
          pieces: { seed: 5, maxPiece: 40 }
        },
        {
          body: sse(
            chunk({ content: "The tool said " }),
            chunk({ content: "echo: hello." }),
            chunk({}, "stop"),
            usage(50, 6)
          )
        }
      )
      const layer = AgentRuntime.layer({
        tools: [echoTool],
        interaction: Interaction.layerHeadless({ approveAll: true })
      }).pipe(
        Layer.provideMerge(OpenAiCompatible.layer({ baseURL: server.baseURL, providerId: "local" })),
        Layer.provideMerge(SessionStore.layerMemory)
      )
      const events = yield* Effect.flatMap(Runner.Runner, (runner) =>
        Stream.runCollect(runner.stream({ cwd: "/tmp", prompt: "Echo hello, then tell me.", model: "local-model" }))
      ).pipe(Effect.map(Chunk.toReadonlyArray), Effect.provide(layer))

      const last = events.at(-1)!
      assert.strictEqual(last.type, "run_completed", JSON.stringify(last))
      if (last.type === "run_completed") {
        assert.strictEqual(last.data.text, "The tool said echo: hello.")
        assert.deepStrictEqual(last.data.usage, { inputTokens: 80, outputTokens: 18 })
      }
      const toolDone = events.filter((event) => event.type === "tool_call_completed")
      assert.strictEqual(toolDone.length, 1)
      assert.strictEqual(server.requests.length, 2)
      const followUp = server.requests[1]!.body as { messages: ReadonlyArray<Record<string, unknown>> }
      assert.deepStrictEqual(
        followUp.messages.find((message) => message.role === "tool"),
        {
          role: "tool",
          tool_call_id: "call_echo",
          content: "echo: hello"
        }
      )
      const assistant = followUp.messages.find((message) => message.role === "assistant")
      assert.deepStrictEqual(assistant?.tool_calls, [
        { id: "call_echo", type: "function", function: { name: "echo", arguments: '{"text":"hello"}' } }
      ])
    })
  )

  it.scopedLive(
    "LIM-6 PRV-2 a call cut right after its name at finish_reason length never runs, arguments empty or absent",
    () =>
      Effect.gen(function* () {
        const cutCall = (id: string, fn: Record<string, unknown>) =>
          sse(
            chunk({ role: "assistant", content: "" }),
            chunk({ content: "Pinging." }),
            chunk({ tool_calls: [{ index: 0, id, type: "function", function: fn }] }),
            chunk({}, "length"),
            usage(20, 64)
          )
        const server = yield* SseServer.sequence(
          { body: cutCall("call_empty", { name: "ping", arguments: "" }), pieces: { seed: 7, maxPiece: 30 } },
          { body: cutCall("call_absent", { name: "ping" }) },
          { body: sse(chunk({ content: "Done without pinging." }), chunk({}, "stop"), usage(40, 5)) }
        )
        const ping = pingTool()
        const layer = AgentRuntime.layer({
          tools: [echoTool, ping.tool],
          interaction: Interaction.layerHeadless({ approveAll: true })
        }).pipe(
          Layer.provideMerge(OpenAiCompatible.layer({ baseURL: server.baseURL, providerId: "local" })),
          Layer.provideMerge(SessionStore.layerMemory)
        )
        const events = yield* Effect.flatMap(Runner.Runner, (runner) =>
          Stream.runCollect(runner.stream({ cwd: "/tmp", prompt: "Ping twice.", model: "local-model" }))
        ).pipe(Effect.map(Chunk.toReadonlyArray), Effect.provide(layer))

        assert.strictEqual(ping.runs(), 0, "the ping tool never ran")
        assert.deepStrictEqual(
          events.filter((event) => event.type === "tool_call_started"),
          []
        )
        assert.deepStrictEqual(
          events.flatMap((event) => (event.type === "truncation_recovery" ? [event.data.reason] : [])),
          ["tool_call_cut", "tool_call_cut"]
        )
        const last = events.at(-1)!
        assert.strictEqual(last.type, "run_completed", JSON.stringify(last))
        assert.strictEqual(server.requests.length, 3)
        const retried = server.requests[2]!.body as { messages: ReadonlyArray<Record<string, unknown>> }
        assert.isFalse(JSON.stringify(retried.messages).includes("call_empty"), "the cut call is never sent back")
      })
  )
})
