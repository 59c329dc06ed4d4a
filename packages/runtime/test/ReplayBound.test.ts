// TL-4 on history sent again: a stored response over the bound on calls, with call ids a provider
// repeated or a result missing, still makes a request where every call sent has its result.

import { MAX_TOOL_CALLS_PER_RESPONSE } from "@alisio/domain/Limits"
import type { Message } from "@alisio/domain/Message"
import { assert, describe, it } from "@effect/vitest"
import { boundReplayedCalls } from "../src/internal/replayBound.js"

const result = (id: string, text: string): Message => ({
  role: "tool",
  toolCallId: id as never,
  toolName: "bash",
  content: [{ _tag: "text", text }],
  isError: false
})

const flood = (ids: ReadonlyArray<string>): Message => ({
  role: "assistant",
  content: ids.map((id) => ({ _tag: "tool_call" as const, id: id as never, name: "bash", arguments: "{}" }))
})

const pairs = (messages: ReadonlyArray<Message>) => ({
  asked: messages.flatMap((m) =>
    m.role === "assistant" ? m.content.flatMap((p) => (p._tag === "tool_call" ? [p.id as string] : [])) : []
  ),
  answered: messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId as string] : []))
})

describe("TL-4 the bound applied to replayed history", () => {
  const kept = MAX_TOOL_CALLS_PER_RESPONSE + 1
  it("TL-4 repeated call ids (every call `call_0`) keep the first results and the later turns whole", () => {
    const ids = Array.from({ length: 300 }, () => "call_0")
    const messages: ReadonlyArray<Message> = [
      flood(ids),
      ...ids.map((id, i) => result(id, `out ${i}`)),
      { role: "user", content: [{ _tag: "text", text: "again" }] },
      flood(["call_0"]),
      result("call_0", "later")
    ]
    const sent = boundReplayedCalls(messages)
    const { answered, asked } = pairs(sent)
    assert.deepStrictEqual(answered, asked)
    assert.strictEqual(asked.length, kept + 1)
    const texts = sent.flatMap((m) => (m.role === "tool" && m.content[0]?._tag === "text" ? [m.content[0].text] : []))
    assert.strictEqual(texts[MAX_TOOL_CALLS_PER_RESPONSE - 1], `out ${MAX_TOOL_CALLS_PER_RESPONSE - 1}`)
    assert.include(texts[MAX_TOOL_CALLS_PER_RESPONSE], "asked for 300")
    assert.strictEqual(texts.at(-1), "later")
  })

  it("TL-4 a missing result of the first call left out gets the note all the same; history within the bound is untouched", () => {
    const ids = Array.from({ length: 200 }, (_, i) => `c${i}`)
    const messages: ReadonlyArray<Message> = [
      flood(ids),
      ...ids.filter((_, i) => i !== MAX_TOOL_CALLS_PER_RESPONSE).map((id) => result(id, id))
    ]
    const { answered, asked } = pairs(boundReplayedCalls(messages))
    assert.deepStrictEqual(answered, asked)
    assert.strictEqual(asked.length, kept)
    const within: ReadonlyArray<Message> = [
      flood(ids.slice(0, kept)),
      ...ids.slice(0, kept).map((id) => result(id, id))
    ]
    assert.strictEqual(boundReplayedCalls(within), within)
  })
})
