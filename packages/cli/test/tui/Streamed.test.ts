// Text that streams in pieces (an answer, reasoning, a command's output) shows as the whole text
// would: an escape sequence, a surrogate pair or a carriage return cut between two deltas leaves
// nothing of itself on the screen (UI-1).

import { Markdown } from "@earendil-works/pi-tui"
import { assert, describe, it } from "@effect/vitest"
import { ReasoningEntry } from "../../src/tui/Entries.js"
import { sanitize } from "../../src/tui/Sanitize.js"
import { StreamingMarkdown, TAIL_LIMIT } from "../../src/tui/StreamingMarkdown.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { ToolCard } from "../../src/tui/ToolCard.js"
import { markdownOptions } from "../../src/tui/Wrap.js"

const plain = makeTheme({ color: false })
const E = "\x1b"
const hostile = `A${E}]0;TITLE${E}\\B${E}[2J${E}[HC${E}]52;c;aGVsbG8=${E}\\D\x9b31mE${E}[31mred${E}[0m 🎉 end`

/** Every way of cutting `text` in two, and in pieces of each size up to 9. */
const cuts = (text: string): Array<Array<string>> => [
  ...Array.from({ length: text.length - 1 }, (_, at) => [text.slice(0, at + 1), text.slice(at + 1)]),
  ...Array.from({ length: 9 }, (_, size) =>
    Array.from({ length: Math.ceil(text.length / (size + 1)) }, (_, i) =>
      text.slice(i * (size + 1), (i + 1) * (size + 1))
    )
  )
]

const clean = (lines: ReadonlyArray<string>) => {
  const shown = lines.map((line) => line.trimEnd()).join("\n")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for what must not be there
  assert.notMatch(shown, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
  assert.notMatch(shown, /[\ud800-\udfff](?![\udc00-\udfff])/u, "no lone half of a pair")
  assert.notInclude(shown, "TITLE")
  assert.notInclude(shown, "52;c")
  assert.notInclude(shown, "31m")
  return shown
}

describe("TUI streamed text", () => {
  it("UI-1 a lone half of a surrogate pair becomes U+FFFD; a whole pair stays", () => {
    assert.strictEqual(sanitize("a\ud83c"), "a\ufffd")
    assert.strictEqual(sanitize("\udf89b"), "\ufffdb")
    assert.strictEqual(sanitize("🎉"), "🎉")
  })

  it("UI-1 an answer cut anywhere, even inside an escape sequence or an emoji, shows as the whole would", () => {
    const whole = new StreamingMarkdown(plain.markdown)
    whole.append(hostile)
    const expected = clean(whole.render(80))
    assert.include(expected, "ABCDE")
    assert.include(expected, "red 🎉 end")
    for (const pieces of cuts(hostile)) {
      const streamed = new StreamingMarkdown(plain.markdown)
      for (const piece of pieces) streamed.append(piece)
      assert.strictEqual(clean(streamed.render(80)), expected, JSON.stringify(pieces))
    }
  })

  it("UI-1 reasoning cut inside an escape sequence shows no part of it", () => {
    for (const pieces of cuts(hostile)) {
      const entry = new ReasoningEntry(plain)
      entry.setExpanded(true)
      for (const piece of pieces) entry.append(piece)
      assert.include(clean(entry.render(80)), "ABCDEred 🎉 end", JSON.stringify(pieces))
    }
  })

  it("UI-1 a command's progress bar redrawn with \\r shows its last state while it runs, whatever the chunks", () => {
    const card = new ToolCard("c1", "bash", JSON.stringify({ command: "download" }), plain)
    for (const percent of [10, 20, 30, 40]) card.progress(`\rprogress ${percent}%`)
    card.progress(`${E}[3`)
    card.progress("2mgreen")
    const running = clean(card.render(80))
    assert.include(running, "progress 40%")
    assert.notInclude(running, "progress 30%")
    assert.include(running, "green")
    for (const pieces of cuts(hostile)) {
      const each = new ToolCard("c2", "bash", JSON.stringify({ command: "x" }), plain)
      for (const piece of pieces) each.progress(piece)
      assert.include(clean(each.render(80)), "ABCDEred 🎉 end", JSON.stringify(pieces))
    }
  })

  /** A long answer without a blank line, as `lines` lines: prose, a list, a numbered list, in turn. */
  const long = (lines: number) =>
    Array.from({ length: lines }, (_, i) =>
      i % 300 < 100
        ? `Line ${i} of the answer goes on with a few more words.`
        : i % 300 < 200
          ? `- item ${i} of a list${i % 7 === 0 ? "\n  with a second line" : ""}`
          : `${i}. step ${i}`
    ).join("\n")
  const inDeltas = (text: string, size: number) =>
    Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

  it("UI-1 an answer without blank lines streams in time linear in its length: each delta cleans and parses only the unfinished tail", () => {
    const work = (lines: number) => {
      const answer = new StreamingMarkdown(plain.markdown)
      for (const delta of inDeltas(long(lines), 16)) answer.append(delta)
      return answer.work
    }
    const once = work(2_000)
    const twice = work(4_000)
    // 4 000 lines come in about 9 000 deltas; re-reading the whole answer each time would cost
    // thousands of times the answer's length, and four times as much for twice the answer.
    assert.isBelow(twice, 2.2 * once, `${once} then ${twice} characters`)
    assert.isBelow(twice, (4 * TAIL_LIMIT * long(4_000).length) / 16, "a bounded tail")
  })

  it("UI-1 an answer cut between its lines shows as the whole Markdown would, a sequence left open at a line's end included", () => {
    const text = `${long(400)}\nthen A${E}]0;TITLE\nstill the title\n${"more title\n".repeat(200)}${E}\\B${E}[31m\n${long(100)}`
    const whole = new Markdown(sanitize(text), 0, 0, plain.markdown, undefined, markdownOptions)
    const expected = clean(whole.render(60))
    // The sequence is broken at the end of its line: the lines after it show, its payload never.
    assert.include(expected, "then A")
    assert.include(expected, "still the title")
    assert.notInclude(expected, "TITLE")
    for (const size of [1, 7, 300]) {
      const streamed = new StreamingMarkdown(plain.markdown)
      for (const delta of inDeltas(text, size)) streamed.append(delta)
      assert.isAbove(streamed.children.length, 3, "cut into blocks")
      assert.strictEqual(clean(streamed.render(60)), expected, `deltas of ${size}`)
    }
  })
})
