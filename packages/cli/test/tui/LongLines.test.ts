// A single streamed line of hundreds of KB (minified JSON, a run-on answer, long reasoning) costs
// work linear in its length, and still shows what the whole text cleaned would (UI-1).

import { Markdown } from "@earendil-works/pi-tui"
import { assert, describe, it } from "@effect/vitest"
import { ReasoningEntry } from "../../src/tui/Entries.js"
import { truncateToWidth } from "../../src/tui/PiTuiCore.js"
import { sanitize } from "../../src/tui/Sanitize.js"
import { StreamingMarkdown } from "../../src/tui/StreamingMarkdown.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { markdownOptions, wrapLine } from "../../src/tui/Wrap.js"

const plain = makeTheme({ color: false })
const E = "\x1b"
const inDeltas = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

/** One line without a newline: words, an emoji, escape sequences (an OSC among them), a \r\n-free run. */
const longLine = (length: number) => {
  const words = [
    `lorem ipsum 🎉 dolor`,
    `${E}[31mred${E}[0m`,
    `sit${E}]0;TITLE${E}\\amet`,
    "consectetur",
    "\u00e9l\u0301an"
  ]
  let text = ""
  for (let i = 0; text.length < length; i++) text += `${words[i % words.length]} `
  return text
}

const visible = (lines: ReadonlyArray<string>) => lines.join("").replace(/\s/g, "")

describe("TUI long streamed lines", () => {
  it("UI-1 an answer of one line of 300 KB streams in work linear in its length, and shows every character the whole would", () => {
    const work = (length: number) => {
      const answer = new StreamingMarkdown(plain.markdown)
      for (const delta of inDeltas(longLine(length), 15)) answer.append(delta)
      const pieces = answer.children.length
      answer.finish()
      return Object.assign(answer, { pieces })
    }
    const half = work(150_000).work
    const whole = work(300_000)
    // Cleaning the whole line on each of its 20 000 deltas would be thousands of times its length.
    assert.isBelow(whole.work, 2.2 * half, `${half} then ${whole.work} characters`)
    assert.isBelow(whole.work, 300 * 300_000, "a bounded tail")
    assert.isAbove(whole.pieces, 10, "cut inside the line")
    const text = longLine(30_000)
    for (const size of [1, 7, 15, 400]) {
      const streamed = new StreamingMarkdown(plain.markdown)
      for (const delta of inDeltas(text, size)) streamed.append(delta)
      streamed.finish()
      const shown = streamed.render(80)
      assert.strictEqual(visible(shown), sanitize(text).replace(/\s/g, ""), `deltas of ${size}`)
      assert.notInclude(shown.join("\n"), "TITLE")
    }
  })

  it("UI-1 a one-line answer cut while it streams shows, once complete, exactly as the whole rendered at once", () => {
    const run = (n: number) =>
      Array.from(
        { length: n },
        (_, i) => `word${i} **bold text ${i}** then \`inline code ${i}\` and [a link ${i}](https://example.com/${i}) `
      ).join("")
    const first = run(60)
    const text = `${first}\n\n${run(50)}\n\`\`\`js\n${"let x = 1; ".repeat(300)}\n\`\`\`\n${run(40)}`
    const whole = (value: string, width: number) =>
      rowsOf(new Markdown(value, 0, 0, plain.markdown, undefined, markdownOptions).render(width))
    const rowsOf = (rows: ReadonlyArray<string>) => rows.map((row) => row.trimEnd())
    for (const size of [1, 13, 500]) {
      const streamed = new StreamingMarkdown(plain.markdown)
      let sent = ""
      let joined = false
      for (const delta of inDeltas(text, size)) {
        streamed.append(delta)
        sent += delta
        if (!joined && sent.length > first.length + 200) {
          joined = true
          // The first paragraph is complete: its pieces are joined back while the answer goes on.
          const rows = whole(first, 80)
          assert.deepStrictEqual(rowsOf(streamed.render(80)).slice(0, rows.length), rows, `deltas of ${size}`)
        }
      }
      assert.isAbove(streamed.children.length, 4, "cut inside the lines while streaming")
      streamed.finish()
      for (const width of [80, 37])
        assert.deepStrictEqual(rowsOf(streamed.render(width)), whole(text, width), `deltas of ${size}, width ${width}`)
    }
  })

  it("UI-1 a code block holding one long line is cut inside without drawing a fence at each cut", () => {
    const text = `Here:\n\n\`\`\`json\n${'{"key":"value","n":12345},'.repeat(4_000)}\n\`\`\`\n\nDone.\n`
    const streamed = new StreamingMarkdown(plain.markdown)
    let pieces = 0
    for (const delta of inDeltas(text, 13)) {
      streamed.append(delta)
      pieces = Math.max(pieces, streamed.children.length)
    }
    assert.isAbove(pieces, 10, "cut inside the line")
    const shown = streamed.render(80)
    assert.strictEqual(
      shown.filter((line) => line.trim().startsWith("```")).length,
      2,
      "one opening, one closing fence"
    )
    assert.strictEqual(visible(shown), sanitize(text).replace(/\s/g, ""))
    assert.strictEqual(shown.at(-1)?.trim(), "Done.")
  })

  /** The rows reasoning showed when it was cleaned and wrapped whole on every frame. */
  const wholeRows = (text: string, width: number) =>
    sanitize(text)
      .trim()
      .split("\n")
      .flatMap((line) => wrapLine(line, width - 2).map((row) => truncateToWidth(`  ${row}`, width, "")))

  it("UI-1 long reasoning streams in work linear in its length", () => {
    const work = (length: number) => {
      const entry = new ReasoningEntry(plain)
      let frame = 0
      for (const delta of inDeltas(longLine(length), 15)) {
        entry.append(delta)
        if (++frame % 16 === 0) entry.render(80)
      }
      return entry.work
    }
    const half = work(150_000)
    const whole = work(300_000)
    assert.isBelow(whole, 2.2 * half, `${half} then ${whole} characters`)
    assert.isBelow(whole, 300 * 300_000, "a bounded tail")
  })

  it("UI-1 reasoning drawn a delta at a time shows the rows of the whole text, cleaned, trimmed and wrapped", () => {
    const texts = [
      `\n  \n  ${longLine(3_000)}\n\n${longLine(700)}\n   \n`,
      `first\r${longLine(2_000)}\rover\nthen A${E}]0;TITLE\nstill\n${E}\\B\n\n  `,
      `${"\u4e2d\u6587".repeat(900)} ${"word ".repeat(300)}\n${"x".repeat(1_500)}   `,
      `${longLine(1_200)}\r\n${longLine(600)}\r\nend`
    ]
    for (const text of texts) {
      for (const size of [1, 9, 64, 700]) {
        const entry = new ReasoningEntry(plain)
        entry.setExpanded(true)
        let sent = ""
        for (const delta of inDeltas(text, size)) {
          entry.append(delta)
          sent += delta
          if (sent.length % 23 === 0 || sent.length === text.length)
            assert.deepStrictEqual(
              entry.render(60).slice(1),
              wholeRows(sent, 60),
              `${JSON.stringify(sent.slice(-40))} by ${size}`
            )
        }
      }
    }
  })
})
