// An escape sequence opened and never ended in streamed text (TL-6, UI-1): past a limit it is
// dropped unseen, the text after it shows, and what waits to be cut stays bounded.
import { assert, describe, it } from "@effect/vitest"
import { ReasoningText } from "../../src/tui/ReasoningText.js"
import { sanitize } from "../../src/tui/Sanitize.js"
import { CleanStream, OPEN_SEQUENCE_LIMIT } from "../../src/tui/StreamCut.js"
import { StreamingMarkdown } from "../../src/tui/StreamingMarkdown.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { ToolCard } from "../../src/tui/ToolCard.js"

const E = "\x1b"
const PAYLOAD = "x".repeat(1_000_000)

const inChunks = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

const streamed = (text: string, size: number) => {
  const stream = new CleanStream()
  let shown = ""
  let most = 0
  for (const chunk of inChunks(text, size)) {
    shown += stream.append(chunk).text
    most = Math.max(most, stream.pendingLength)
  }
  return { shown: shown + stream.unsettled().text, most }
}

describe("an escape sequence left open in streamed text", () => {
  it("TL-6: `ESC ]` then 1 MB then a newline: the pending text stays bounded and what follows shows", () => {
    for (const [open, size] of [
      [`${E}]`, 1000],
      [`${E}P`, 4096],
      [`${E}]8;;`, 1]
    ] as const) {
      const { shown, most } = streamed(`before ${open}${PAYLOAD}\nafter`, size)
      assert.isAtMost(most, OPEN_SEQUENCE_LIMIT + 2 * size + 16, `${JSON.stringify(open)} in chunks of ${size}`)
      assert.strictEqual(shown, "before \nafter")
    }
  })

  it("TL-6: a dropped sequence ends at its terminator too, even split between chunks, and short sequences are cleaned as before", () => {
    const { shown, most } = streamed(
      `a${E}]${PAYLOAD.slice(0, 20_000)}${E}\\b ${E}]0;title\x07c\n${E}[31md${E}[0m`,
      999
    )
    assert.isAtMost(most, OPEN_SEQUENCE_LIMIT + 2 * 999 + 16)
    assert.strictEqual(shown, "ab c\nd")
    assert.strictEqual(streamed(`a${E}]${"y".repeat(4000)}\x07b`, 7).shown, "ab")
  })

  it("UI-1: a tool card and reasoning fed an open `ESC ]` and 1 MB show what comes after it", () => {
    const card = new ToolCard("c1", "bash", JSON.stringify({ command: "cat x" }), makeTheme({ color: false }))
    const reasoning = new ReasoningText()
    for (const chunk of inChunks(`${E}]${PAYLOAD}\nafter`, 4096)) {
      card.progress(chunk)
      reasoning.append(chunk)
    }
    assert.isTrue(card.render(80).some((line) => line.trim() === "after"))
    assert.deepStrictEqual(
      reasoning.rows(80, (text) => text).map((row) => row.trim()),
      ["after"]
    )
    assert.isBelow(reasoning.work, 20 * OPEN_SEQUENCE_LIMIT + 100_000)
  })

  it("UI-1: a streamed answer with an open `ESC ]` and 1 MB drops it, shows what comes before and after, and keeps all it received", () => {
    const plain = makeTheme({ color: false })
    for (const text of [`Intro **bold** ${E}]${PAYLOAD}\nafter *it*`, `${E}P${PAYLOAD}${E}\\after`]) {
      const answer = new StreamingMarkdown(plain.markdown)
      for (const chunk of inChunks(text, 4096)) answer.append(chunk)
      const shown = answer
        .render(80)
        .map((line) => line.trim())
        .filter((line) => line !== "")
      assert.strictEqual(shown.at(-1), text.startsWith("Intro") ? "after it" : "after")
      if (text.startsWith("Intro")) assert.deepStrictEqual(shown.slice(0, 1), ["Intro bold"])
      assert.notInclude(shown.join(""), "xxx")
      assert.strictEqual(answer.value, text)
      assert.isBelow(answer.work, 20 * OPEN_SEQUENCE_LIMIT + 100_000, `${answer.work} characters cleaned`)
    }
  })

  it("UI-1: an `ESC ]` left open over many short lines is broken at its newline: every later line shows", () => {
    const plain = makeTheme({ color: false })
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}`)
    for (const open of [`${E}]0;title`, `${E}P`, "\u009d8;;"]) {
      const text = `before ${open}\n${lines.join("\n")}\nend`
      assert.strictEqual(sanitize(text), `before \n${lines.join("\n")}\nend`)
      for (const size of [1, 9, 4096]) {
        assert.strictEqual(streamed(text, size).shown, sanitize(text), `${JSON.stringify(open)} by ${size}`)
        const answer = new StreamingMarkdown(plain.markdown)
        const reasoning = new ReasoningText()
        const card = new ToolCard("c1", "bash", JSON.stringify({ command: "cat x" }), plain)
        card.setExpanded(true)
        for (const chunk of inChunks(text, size)) {
          answer.append(chunk)
          reasoning.append(chunk)
          card.progress(chunk)
        }
        answer.finish()
        const shownAnswer = answer.render(80).map((line) => line.trim())
        assert.includeMembers(shownAnswer, ["line 0", "line 150", "line 299", "end"])
        const shownReasoning = reasoning.rows(80, (row) => row).map((row) => row.trim())
        assert.deepStrictEqual(shownReasoning, ["before", ...lines, "end"])
        assert.isTrue(
          card.render(80).some((line) => line.includes("line 299")),
          "the tool card's last lines"
        )
      }
    }
  })
})
