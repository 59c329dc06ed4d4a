// A running tool card's output, cleaned a chunk at a time (UI-1): each chunk once, however many
// frames are drawn, and shown as the whole output cleaned at once would show.
import { assert, describe, it } from "@effect/vitest"
import { makeTheme } from "../../src/tui/Theme.js"
import { ToolCard } from "../../src/tui/ToolCard.js"

const plain = makeTheme({ color: false })
const E = "\x1b"

/** A build's output: lines with colours, a title sequence, a progress bar redrawn with \r, tabs. */
const output = (lines: number) =>
  Array.from({ length: lines }, (_, i) =>
    i % 50 === 0
      ? `${E}]0;step ${i}${E}\\\r[${"#".repeat(i % 20)}] ${i}%\r[${"#".repeat(20)}] done`
      : `${E}[3${i % 8}mline ${i}${E}[0m\tof the build, with a few words ${"x".repeat(i % 90)}`
  ).join("\n")

const inChunks = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

const card = () => new ToolCard("c1", "bash", JSON.stringify({ command: "make" }), plain)

describe("a running tool card", () => {
  it("UI-1 cleans each chunk of its output once: 220 KB in 64-byte chunks, a frame after each, costs about its length", () => {
    const text = output(2_400)
    assert.isAbove(text.length, 150_000)
    const streamed = card()
    for (const chunk of inChunks(text, 64)) {
      streamed.progress(chunk)
      streamed.render(80)
    }
    // Cleaning the whole output on every frame would cost about chunks × length / 2: 280 million characters.
    assert.isBelow(streamed.work, 3 * text.length, `${streamed.work} characters cleaned for ${text.length}`)
  })

  it("UI-1 shows what the whole output cleaned at once shows, folded and unfolded, however it is cut", () => {
    const text = output(1_200)
    const whole = card()
    whole.progress(text)
    for (const size of [1, 7, 64, 1000]) {
      const streamed = card()
      for (const chunk of inChunks(text, size)) streamed.progress(chunk)
      assert.deepStrictEqual(streamed.render(80), whole.render(80), `chunks of ${size}`)
      streamed.setExpanded(true)
      whole.setExpanded(true)
      assert.deepStrictEqual(streamed.render(60), whole.render(60), `chunks of ${size}, expanded`)
      whole.setExpanded(false)
    }
    const folded = whole.render(80).map((line) => line.trimEnd())
    assert.strictEqual(folded.at(-1), "  … 1197 more lines (Ctrl-O shows them)")
    assert.match(folded.at(-2)!, /^ {2}line 1199 {4}of the build/)
    whole.complete("completed", "ok", 10)
    assert.strictEqual(whole.render(80).at(1)?.trimEnd(), "  ok")
  })
})
