import { assert, describe, it } from "@effect/vitest"
import { SseDecoder, type SseEvent } from "../../src/internal/Sse.js"

const decode = (pieces: ReadonlyArray<Uint8Array>): Array<SseEvent> => {
  const decoder = new SseDecoder()
  const events: Array<SseEvent> = []
  for (const piece of pieces) decoder.push(piece, events)
  decoder.end(events)
  return events
}

// Every framing feature at once: comments, CRLF, bare CR, `data:` without its space, a multi-line
// data field, an event name, llama.cpp's `error:` field, unknown fields, multi-byte UTF-8, and a
// final event without its blank line.
const body = Buffer.from(
  ": keep-alive\n\n" +
    'event: response.created\r\ndata: {"a":"é"}\r\n\r\n' +
    'data:{"b":"🌍"}\r\r' +
    "id: 7\nretry: 10\ndata: line one\ndata: line two\n\n" +
    'error: {"code":400}\n\n' +
    "\n\n: trailing comment\n" +
    "data: [DONE]",
  "utf8"
)

const expected: Array<SseEvent> = [
  { event: "response.created", data: '{"a":"é"}', error: undefined },
  { event: undefined, data: '{"b":"🌍"}', error: undefined },
  { event: undefined, data: "line one\nline two", error: undefined },
  { event: undefined, data: "", error: '{"code":400}' },
  { event: undefined, data: "[DONE]", error: undefined }
]

describe("SseDecoder", () => {
  it("PRV-2 decodes comments, CRLF, CR, data without a space, error fields and a final event without blank line", () => {
    assert.deepStrictEqual(decode([body]), expected)
  })

  it("PRV-2 decodes the same events however the bytes are cut in two or three pieces", () => {
    for (let i = 0; i <= body.length; i++) {
      assert.deepStrictEqual(decode([body.subarray(0, i), body.subarray(i)]), expected, `cut at ${i}`)
      for (let j = i; j <= body.length; j += 3) {
        assert.deepStrictEqual(
          decode([body.subarray(0, i), body.subarray(i, j), body.subarray(j)]),
          expected,
          `cut at ${i} and ${j}`
        )
      }
    }
  })

  it("PRV-2 decodes byte by byte", () => {
    assert.deepStrictEqual(decode([...body].map((byte) => Uint8Array.of(byte))), expected)
  })
})
