// MCP servers that answer carelessly (fixtures/mcp/unruly.mjs, a real process): every call gets
// a bounded, truthful answer at once, never a wait until its timeout (MCP-1).
import { fileURLToPath } from "node:url"
import { ToolCallId } from "@alisio/domain/Ids"
import type { McpServer } from "@alisio/runtime/Config"
import { McpServers } from "@alisio/runtime/McpServers"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { mcpWorld } from "./helpers/mcp.js"

const unruly = fileURLToPath(new URL("./fixtures/mcp/unruly.mjs", import.meta.url))
const server = (env: { readonly [name: string]: string } = {}): McpServer => ({
  type: "stdio",
  command: process.execPath,
  args: [unruly],
  env
})

/** Calls a registered tool as a run would; what the model reads of it, as text. */
const call = (name: string) =>
  Effect.gen(function* () {
    const tool = (yield* Effect.flatMap(Tools, (tools) => tools.all)).find((each) => each.name === name)
    if (tool === undefined) return yield* Effect.dieMessage(`no tool ${name}`)
    const result = yield* Effect.either(
      tool.execute(
        {},
        {
          sessionId: "s" as never,
          runId: "r" as never,
          toolCallId: ToolCallId.make("c1"),
          cwd: "/",
          readOnly: false,
          progress: () => Effect.void,
          approveExternalPath: () => Effect.void,
          askUser: () => Effect.succeed("")
        }
      ) as Effect.Effect<
        { readonly content: ReadonlyArray<{ readonly _tag: string; readonly text?: string }> },
        { readonly message: string }
      >
    )
    return Either.match(result, {
      onLeft: (error) => `error: ${error.message}`,
      onRight: (ok) => ok.content.map((part) => part.text ?? `[${part._tag}]`).join("|")
    })
  })

describe("MCP servers that answer carelessly", () => {
  it.scopedLive(
    "MCP-1 an answer too large to read, or one the SDK would drop, fails its call at once, saying why",
    () =>
      Effect.gen(function* () {
        // A call that waited for its timeout would fail this test by the test's own.
        const { context } = yield* mcpWorld({ unruly: server() }, { callMs: 600_000 })
        yield* Effect.gen(function* () {
          yield* Effect.flatMap(McpServers, (mcp) => mcp.ready)
          const failed = "error: The MCP server unruly failed the call: "
          assert.strictEqual(
            yield* call("mcp__unruly__oversized_sdk_order"),
            `${failed}its answer is larger than 10 MB, the most Alisio reads of one message`
          )
          assert.strictEqual(
            yield* call("mcp__unruly__oversized_id_first"),
            `${failed}its answer is larger than 10 MB, the most Alisio reads of one message`
          )
          assert.strictEqual(yield* call("mcp__unruly__fine"), "still here", "the lines after it are read")
          assert.strictEqual(
            yield* call("mcp__unruly__null_result"),
            `${failed}its answer is not valid MCP: the result is null, not an object`
          )
          assert.strictEqual(yield* call("mcp__unruly__extra_key"), "with an extra key")
          assert.strictEqual(
            yield* call("mcp__unruly__bad_error"),
            `${failed}its error answer is not valid JSON-RPC (no numeric code and message)`
          )
          assert.strictEqual(
            yield* call("mcp__unruly__code_32000"),
            "error: The MCP server unruly refused the call: quota exceeded",
            "-32000 from a server that is still there is its answer, not the connection closing"
          )
          const endless = yield* call("mcp__unruly__endless_error")
          assert.isTrue(endless.startsWith("error: The MCP server unruly refused the call: EEE"))
          assert.isAtMost(endless.length, 30_200)
          assert.strictEqual(yield* call("mcp__unruly__fine"), "still here")
        }).pipe(Effect.provide(context))
      }),
    60_000
  )
})
