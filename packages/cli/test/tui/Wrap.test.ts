import { Markdown, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui"
import { assert, describe, it } from "@effect/vitest"
import { UserEntry } from "../../src/tui/Entries.js"
import { StreamingMarkdown } from "../../src/tui/StreamingMarkdown.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { ToolCard } from "../../src/tui/ToolCard.js"
import { LONG_LINE, markdownOptions, wrapLine } from "../../src/tui/Wrap.js"

const plain = makeTheme({ color: false })

/** One line of 100 KB with a wide character and an emoji in its middle: a paste, a minified file. */
const runOn = `${"A".repeat(50_000)}中文🎉${"B".repeat(50_000)}`

describe("Wrap", () => {
  it("UI-1 a long line wraps as pi-tui would wrap it: at spaces, on either side of a wide character, within the width", () => {
    for (let seed = 0; seed < 60; seed++) {
      const words = Array.from(
        { length: 120 + seed },
        (_, i) => "x".repeat(((i * 7 + seed) % 13) + 1) + (i % 17 === 0 ? "中" : i % 23 === 0 ? "é" : "")
      )
      const line = words.join(" ")
      assert.isAbove(line.length, LONG_LINE)
      const width = 40 + (seed % 50)
      assert.deepStrictEqual(wrapLine(line, width), wrapTextWithAnsi(line, width), `seed ${seed}`)
    }
  })

  it("UI-1 a message of one 100 KB line with a wide character in it renders at once, every character kept", () => {
    const entry = new UserEntry(runOn, plain)
    entry.setExpanded(true)
    const rows = entry.render(100)
    assert.isTrue(rows.every((row) => visibleWidth(row) <= 100))
    const shown = rows.map((row) => row.slice(2)).join("")
    assert.strictEqual(shown, runOn)
    entry.setExpanded(false)
    const folded = entry.render(20)
    assert.isTrue(folded.every((row) => visibleWidth(row) <= 20))
    assert.include(
      folded
        .slice(-3)
        .map((row) => row.trim())
        .join(" "),
      "more lines (Ctrl-O shows them)"
    )
  })

  it("UI-1 an answer or a tool's output of one 100 KB line renders at once, in rows of the width", () => {
    const answer = new StreamingMarkdown(plain.markdown)
    for (let i = 0; i < runOn.length; i += 10_000) answer.append(runOn.slice(i, i + 10_000))
    const rows = answer.render(100)
    assert.isTrue(rows.every((row) => visibleWidth(row) <= 100))
    assert.strictEqual(rows.join("").replace(/\s+/g, ""), runOn)

    const stored = new Markdown(`**a** ${runOn}`, 0, 0, plain.markdown, undefined, markdownOptions).render(60)
    assert.isTrue(stored.every((row) => visibleWidth(row) <= 60))

    const card = new ToolCard("c1", "bash", JSON.stringify({ command: "cat min.js" }), plain)
    card.complete("completed", `${runOn}\n[exit code 0]`, 5)
    card.setExpanded(true)
    const lines = card.render(100)
    assert.strictEqual(lines.length, 1 + 20 + 1, "the head, 20 rows of the long line, the exit code")
    assert.include(lines.at(-1)!, "[exit code 0]")
  })
})
