// A long block streamed a line at a time (a code block, a blockquote, a table) costs work linear
// in its length, and shows, once complete, the rows the whole answer rendered at once would (UI-1).

import { Markdown } from "@earendil-works/pi-tui"
import { assert, describe, it } from "@effect/vitest"
import { StreamingMarkdown } from "../../src/tui/StreamingMarkdown.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { markdownOptions } from "../../src/tui/Wrap.js"

const plain = makeTheme({ color: false })
const colored = makeTheme({ color: true })
const inDeltas = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

/** The work an answer costs streamed in deltas of 8 characters, drawn every fourth delta. */
const workOf = (text: string) => {
  const answer = new StreamingMarkdown(plain.markdown)
  let frame = 0
  for (const delta of inDeltas(text, 8)) {
    answer.append(delta)
    if (++frame % 4 === 0) answer.render(80)
  }
  answer.finish()
  return answer.work
}

const assertLinear = (make: (lines: number) => string) => {
  const half = workOf(make(1_000))
  const whole = workOf(make(2_000))
  assert.isBelow(whole, 2.3 * half, `${half} then ${whole} characters`)
  assert.isBelow(whole, 400 * make(2_000).length, "a bounded tail")
}

const assertShownWhole = (text: string, theme = plain) => {
  const whole = (width: number) =>
    new Markdown(text, 0, 0, theme.markdown, undefined, markdownOptions).render(width).map((row) => row.trimEnd())
  for (const size of [1, 8, 300]) {
    const streamed = new StreamingMarkdown(theme.markdown)
    for (const delta of inDeltas(text, size)) streamed.append(delta)
    streamed.finish()
    assert.isAbove(streamed.children.length, 3, `cut while streaming, deltas of ${size}`)
    for (const width of [80, 23])
      assert.deepStrictEqual(
        streamed.render(width).map((row) => row.trimEnd()),
        whole(width),
        `deltas of ${size}, width ${width}`
      )
  }
}

const code = (lines: number) =>
  `text\n\`\`\`ts\n${Array.from({ length: lines }, (_, i) => `const x${i} = "${i}" // line ${i}`).join("\n")}\n\`\`\`\n`

describe("TUI long streamed blocks", () => {
  it("UI-1 a code block of thousands of short lines streams in work linear in its length", () => {
    assertLinear(code)
  })

  it("UI-1 a long code block cut between its lines shows exactly as the whole block rendered at once", () => {
    const lines = Array.from({ length: 400 }, (_, i) =>
      i % 37 === 0 ? "" : i % 11 === 0 ? `    indented ${i} 'str' 0x${i}` : `let v${i} = ${i} # note ${i}`
    )
    assertShownWhole(code(300), colored)
    assertShownWhole(`Intro:\n\n  ~~~~python\n${lines.join("\n")}\n  ~~~~\n\nAfter the block.\n`, colored)
    assertShownWhole(
      `\`\`\`\n${lines.slice(0, 120).join("\n")}\n${"long,".repeat(600)}\n${lines.join("\n")}\n\`\`\`\nDone.\n`
    )
  })
})
