// MCP tools in real runs: the runner on the FakeProvider, the SDK fixture server over stdio.
import { fileURLToPath } from "node:url"
import type { ToolResultMessage } from "@alisio/domain/Message"
import * as Fake from "@alisio/providers/FakeProvider"
import { Runner } from "@alisio/runtime/Runner"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { assertContract, baseOptions, collect, ofType } from "./helpers/harness.js"
import { mcpWorld, stdioFixture } from "./helpers/mcp.js"

const call = (name: string, args: unknown, id = "c1") => Fake.callTools({ id, name, args })

/** Runs `script` with the fixture server configured, and returns the run's events and the model's requests. */
const runWith = (
  script: Fake.Script,
  options: {
    readonly readOnly?: boolean
    readonly approveAll?: boolean
    readonly servers?: Parameters<typeof mcpWorld>[0]
  } = {}
) =>
  Effect.gen(function* () {
    const { context, world } = yield* mcpWorld(options.servers ?? { fixture: stdioFixture() }, {
      script,
      ...(options.approveAll === undefined ? {} : { approveAll: options.approveAll })
    })
    return yield* Effect.gen(function* () {
      const events = yield* collect({ ...baseOptions, cwd: world.dir, readOnly: options.readOnly === true })
      assertContract(events)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
      return { events, requests, world }
    }).pipe(Effect.provide(context))
  })

const toolMessage = (request: { readonly messages: ReadonlyArray<{ readonly role: string }> } | undefined) =>
  [...(request?.messages ?? [])].reverse().find((message) => message.role === "tool") as ToolResultMessage | undefined

describe("MCP tools in a run", () => {
  it.scopedLive(
    "MCP-1 the model is offered mcp__<server>__<tool> with the server's schema, calls it, and reads the result",
    () =>
      Effect.gen(function* () {
        const { events, requests } = yield* runWith([call("mcp__fixture__echo", { text: "hi" }), Fake.answer("done")])
        const offered = requests[0]!.tools.find((tool) => tool.name === "mcp__fixture__echo")
        assert.deepStrictEqual(offered, {
          name: "mcp__fixture__echo",
          description: "Echoes its text back",
          parameters: {
            type: "object",
            properties: { text: { type: "string", description: "What to echo" } },
            required: ["text"]
          }
        })
        const started = ofType(events, "tool_call_started")[0]!
        assert.strictEqual(started.data.effect, "read")
        const completed = ofType(events, "tool_call_completed")[0]!
        assert.deepStrictEqual([completed.data.status, completed.data.result], ["completed", "echo: hi"])
        assert.strictEqual(ofType(events, "run_completed")[0]?.data.text, "done")
      })
  )

  it.scopedLive(
    "MCP-1 arguments that do not match the schema are a tool error the model sees; the server is not called",
    () =>
      Effect.gen(function* () {
        const { events, world } = yield* runWith([call("mcp__fixture__write_note", { note: 42 }), Fake.answer("ok")])
        const completed = ofType(events, "tool_call_completed")[0]!
        assert.strictEqual(completed.data.status, "error")
        assert.match(
          completed.data.result,
          /^Invalid arguments for mcp__fixture__write_note: data\/note must be string/
        )
        assert.deepStrictEqual(world.trace("notes.txt"), [])
      })
  )

  it.scopedLive("MCP-1 isError is a tool error", () =>
    Effect.gen(function* () {
      const { events } = yield* runWith([call("mcp__fixture__fail", {}), Fake.answer("ok")])
      const completed = ofType(events, "tool_call_completed")[0]!
      assert.deepStrictEqual([completed.data.status, completed.data.result], ["error", "the fixture failed on purpose"])
    })
  )

  it.scopedLive("MCP-1 images are image parts; resource links and embedded resources are text naming their URI", () =>
    Effect.gen(function* () {
      const { requests } = yield* runWith([call("mcp__fixture__rich", {}), Fake.answer("ok")])
      const result = toolMessage(requests[1])!
      assert.deepStrictEqual(
        result.content.map((part) => part._tag),
        ["text", "image"]
      )
      const image = result.content[1]!
      assert.strictEqual(image._tag === "image" ? image.mediaType : "", "image/png")
      const text = result.content[0]!._tag === "text" ? (result.content[0] as { text: string }).text : ""
      assert.strictEqual(
        text,
        [
          "some text",
          '[resource link "report": file:///tmp/report.txt (text/plain)]',
          "[resource memo://one (text/plain)]\nthe memo",
          "[audio (audio/wav), 3 bytes, left out: audio is not sent to the model]"
        ].join("\n\n")
      )
    })
  )

  it.scopedLive("MCP-1 a large result is capped like other tools' output: head and tail kept", () =>
    Effect.gen(function* () {
      const { requests } = yield* runWith([call("mcp__fixture__big", { chars: 100_000 }), Fake.answer("ok")])
      const result = toolMessage(requests[1])!
      const text = (result.content[0] as { readonly text: string }).text
      assert.isBelow(text.length, 30_200)
      assert.isTrue(text.startsWith("BEGINxxx") && text.endsWith("xxxEND"))
      assert.include(text, "characters of output cut")
    })
  )

  it.scopedLive("MCP-1 progress notifications become tool_progress, a line each", () =>
    Effect.gen(function* () {
      const { events } = yield* runWith([call("mcp__fixture__progress", { steps: 3 }), Fake.answer("ok")])
      assert.deepStrictEqual(
        ofType(events, "tool_progress").map((event) => event.data.text),
        ["[1/3] step 1\n", "[2/3] step 2\n", "[3/3] step 3\n"]
      )
      const progressAt = events.findIndex((event) => event.type === "tool_progress")
      const completedAt = events.findIndex((event) => event.type === "tool_call_completed")
      assert.isBelow(progressAt, completedAt)
    })
  )

  it.scopedLive("MCP-1 progress read in the same chunk as the result still comes before it, all of it", () =>
    Effect.gen(function* () {
      const burst = fileURLToPath(new URL("./fixtures/mcp/burst.mjs", import.meta.url))
      const { events } = yield* runWith([call("mcp__burst__burst", {}), Fake.answer("ok")], {
        servers: { burst: { type: "stdio", command: process.execPath, args: [burst] } }
      })
      assert.deepStrictEqual(
        ofType(events, "tool_progress").map((event) => event.data.text),
        ["[1/3] step 1\n", "[2/3] step 2\n", "[3/3] step 3\n"]
      )
      assert.strictEqual(ofType(events, "tool_call_completed")[0]?.data.result, "burst done")
      const types = events.map((event) => event.type)
      assert.isBelow(types.lastIndexOf("tool_progress"), types.indexOf("tool_call_completed"))
    })
  )

  it.scopedLive("MCP-1 notifications/tools/list_changed: the next turn offers the new tool, which works", () =>
    Effect.gen(function* () {
      const { events, requests } = yield* runWith([
        call("mcp__fixture__add_tool", {}),
        call("mcp__fixture__late", {}, "c2"),
        Fake.answer("ok")
      ])
      const names = (index: number) => requests[index]!.tools.map((tool) => tool.name)
      assert.notInclude(names(0), "mcp__fixture__late")
      assert.include(names(1), "mcp__fixture__late")
      assert.deepStrictEqual(
        ofType(events, "tool_call_completed").map((event) => event.data.result),
        ["added late", "late tool here"]
      )
    })
  )

  it.scopedLive("MCP-1 TL-2 a tool without readOnlyHint is external: denied without approval, run with it", () =>
    Effect.gen(function* () {
      const denied = yield* runWith([call("mcp__fixture__write_note", { note: "no" }), Fake.answer("ok")], {
        approveAll: false
      })
      const refusal = ofType(denied.events, "tool_call_completed")[0]!
      assert.strictEqual(refusal.data.status, "denied")
      assert.deepStrictEqual(denied.world.trace("notes.txt"), [])
      const approved = yield* runWith([call("mcp__fixture__write_note", { note: "yes" }), Fake.answer("ok")])
      assert.strictEqual(ofType(approved.events, "approval_resolved")[0]?.data.approved, true)
      assert.deepStrictEqual(approved.world.trace("notes.txt"), ["yes"])
    })
  )

  it.scopedLive("MCP-1 TL-2 a read-only run is offered the server's read tools only", () =>
    Effect.gen(function* () {
      const { requests } = yield* runWith([Fake.answer("ok")], { readOnly: true })
      const names = requests[0]!.tools.map((tool) => tool.name)
      assert.include(names, "mcp__fixture__echo")
      assert.notInclude(names, "mcp__fixture__write_note")
    })
  )

  it.scopedLive("MCP-1 a server that fails to start is an mcp_server_failed event, once, and the run goes on", () =>
    Effect.gen(function* () {
      const { events, requests } = yield* runWith(
        [call("mcp__fixture__echo", { text: "still here" }), Fake.answer("ok")],
        { servers: { fixture: stdioFixture(), gone: { type: "stdio", command: "alisio-no-such-mcp-server" } } }
      )
      const failed = ofType(events, "mcp_server_failed")
      assert.strictEqual(failed.length, 1)
      assert.deepStrictEqual([failed[0]!.data.server, failed[0]!.data.stage], ["gone", "start"])
      assert.isBelow(
        events.indexOf(failed[0]!),
        events.findIndex((event) => event.type === "turn_completed")
      )
      assert.isFalse(requests[0]!.tools.some((tool) => tool.name.startsWith("mcp__gone__")))
      assert.strictEqual(ofType(events, "run_completed").length, 1)
    })
  )

  it.scopedLive("MCP-1 a call past the server's call timeout is cancelled on the server and is an error", () =>
    Effect.gen(function* () {
      const { events, world } = yield* runWith([call("mcp__fixture__slow", {}), Fake.answer("ok")], {
        servers: { fixture: stdioFixture({ timeout: { call: "300ms" } }) }
      })
      const completed = ofType(events, "tool_call_completed")[0]!
      assert.deepStrictEqual(
        [completed.data.status, completed.data.result],
        ["error", "The MCP server fixture did not answer within 300ms; the call was cancelled"]
      )
      for (let waited = 0; world.trace("cancelled.txt").length === 0 && waited < 5_000; waited += 20) {
        yield* Effect.sleep(20)
      }
      assert.deepStrictEqual(
        world.trace("cancelled.txt"),
        world.trace("slow.txt").map((line) => line.slice(8))
      )
    })
  )

  it.scopedLive("MCP-1 CLI-2 cancelling the run during a call sends notifications/cancelled and stops waiting", () =>
    Effect.gen(function* () {
      const { context, world } = yield* mcpWorld(
        { fixture: stdioFixture() },
        { script: [call("mcp__fixture__slow", {}), Fake.answer("never")] }
      )
      yield* Effect.gen(function* () {
        const runner = yield* Runner
        const started = yield* Deferred.make<void>()
        const seen: Array<string> = []
        const fiber = yield* Effect.fork(
          runner.run({
            ...baseOptions,
            cwd: world.dir,
            onEvent: (event) => {
              seen.push(event.type)
              return event.type === "tool_call_started" ? Deferred.succeed(started, undefined) : Effect.void
            }
          })
        )
        yield* Deferred.await(started)
        for (let waited = 0; world.trace("slow.txt").length === 0 && waited < 5_000; waited += 20) {
          yield* Effect.sleep(20)
        }
        yield* Fiber.interrupt(fiber)
        assert.strictEqual(seen.at(-1), "run_cancelled")
        for (let waited = 0; world.trace("cancelled.txt").length === 0 && waited < 5_000; waited += 20) {
          yield* Effect.sleep(20)
        }
        assert.deepStrictEqual(
          world.trace("cancelled.txt"),
          world.trace("slow.txt").map((line) => line.slice(8))
        )
      }).pipe(Effect.provide(context))
    })
  )
})
