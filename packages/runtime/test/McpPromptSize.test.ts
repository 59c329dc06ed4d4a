// The up-front prompt-size check counts the MCP servers' tools: the reference "everything" server
// from npm, whose tool definitions take thousands of tokens.
import { fileURLToPath } from "node:url"
import type { Message } from "@alisio/domain/Message"
import type { ToolSpec } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import { McpServers } from "@alisio/runtime/McpServers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { estimateTokens, messageChars, requestChars } from "../src/internal/compaction/estimate.js"
import { baseOptions } from "./helpers/harness.js"
import { mcpWorld } from "./helpers/mcp.js"

const everything = fileURLToPath(new URL("../../../node_modules/.bin/mcp-server-everything", import.meta.url))
const servers = { everything: { type: "stdio" as const, command: everything, args: ["stdio"] } }
const OUTPUT = 1_000

const prompt = `Summarise this: ${"lorem ipsum dolor sit amet ".repeat(400)}`
const tokensOf = (chars: number) => estimateTokens(chars, { ratio: undefined })

/** What the tools take of a request without and with the MCP server's, in tokens. */
const toolTokens = Effect.gen(function* () {
  const { context } = yield* mcpWorld(servers)
  return yield* Effect.gen(function* () {
    const tools = yield* Tools
    const specs = Effect.map(tools.all, (all) =>
      all.map(({ description, name, parameters }): ToolSpec => ({ description, name, parameters }))
    )
    const fixed = (tools: ReadonlyArray<ToolSpec>) =>
      tokensOf(requestChars({ model: baseOptions.model, messages: [], tools, maxOutputTokens: 0 }))
    const without = fixed(yield* specs)
    yield* (yield* McpServers).ready
    return { without, with: fixed(yield* specs) }
  }).pipe(Effect.provide(context))
})

describe("the prompt-size check and MCP tools", () => {
  it.scopedLive(
    "CTX-1 a prompt that fits beside the builtin tools but not beside the MCP servers' is refused before anything is stored",
    () =>
      Effect.gen(function* () {
        const tokens = yield* toolTokens
        assert.isAbove(tokens.with - tokens.without, 500, "the everything server offers tools worth counting")
        const message: Message = { role: "user", content: [{ _tag: "text", text: prompt }] }
        const promptTokens = tokensOf(messageChars(message))
        // Room for the prompt beside the builtin tools, with half the MCP tools' size to spare.
        const window = OUTPUT + tokens.without + promptTokens + Math.floor((tokens.with - tokens.without) / 2)

        const { context } = yield* mcpWorld(servers, { script: [Fake.answer("never asked")] })
        yield* Effect.gen(function* () {
          const refused = yield* Effect.flip(
            (yield* Runner).run({
              ...baseOptions,
              prompt,
              limits: { maxContextTokens: window, maxOutputTokens: OUTPUT }
            })
          )
          assert.strictEqual(refused._tag, "PromptTooLargeError")
          assert.include(refused.message, "nothing was stored")
          assert.deepStrictEqual(yield* (yield* SessionStore).sessions(), [])
          assert.deepStrictEqual(yield* (yield* Fake.FakeProvider).requests, [])
        }).pipe(Effect.provide(context))
      }),
    60_000
  )
})
