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

// biome-ignore lint/suspicious/noControlCharactersInRegex: styles are escape sequences
const SGR = /(\u001b\[[0-9;]*m)/

/** Applies one SGR parameter list to the styles on. */
const applySgr = (on: Map<string, string>, params: string) => {
  const codes = (params === "" ? "0" : params).split(";").map(Number)
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!
    if (code === 0) on.clear()
    else if (code === 22) for (const key of ["bold", "dim"]) on.delete(key)
    else if (code === 1 || code === 2) on.set(code === 1 ? "bold" : "dim", "on")
    else if (code >= 3 && code <= 9) on.set(`a${code}`, "on")
    else if (code >= 23 && code <= 29) on.delete(`a${code - 20}`)
    else if (code === 38 || code === 48) {
      const size = codes[i + 1] === 5 ? 2 : 4
      on.set(code === 38 ? "fg" : "bg", codes.slice(i + 1, i + 1 + size).join(";"))
      i += size
    } else if (code === 39) on.delete("fg")
    else if (code === 49) on.delete("bg")
    else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) on.set("fg", String(code))
    else if ((code >= 40 && code <= 47) || (code >= 100 && code <= 107)) on.set("bg", String(code))
  }
}

/**
 * A row as the terminal shows it: each character with the styles it is drawn in, without the
 * spaces that end it unseen (the escape sequences that get there may differ, what shows may not).
 */
const shownRow = (row: string) => {
  const cells: Array<string> = []
  const on = new Map<string, string>()
  for (const [index, part] of row.split(SGR).entries()) {
    // The separators the split keeps, at odd places, are the style sequences.
    if (index % 2 === 1) applySgr(on, part.slice(2, -1))
    else
      for (const char of part)
        cells.push(
          `${[...on]
            .map(([key, value]) => `${key}=${value}`)
            .sort()
            .join(",")}:${char}`
        )
  }
  const unseen = (cell: string) => cell.endsWith(": ") && !/a4|a7|bg/.test(cell)
  while (cells.length > 0 && unseen(cells.at(-1)!)) cells.pop()
  return cells.join("")
}

const assertShownWhole = (text: string, theme = plain) => {
  const whole = (width: number) =>
    new Markdown(text, 0, 0, theme.markdown, undefined, markdownOptions).render(width).map(shownRow)
  for (const size of [1, 8, 300]) {
    const streamed = new StreamingMarkdown(theme.markdown)
    for (const delta of inDeltas(text, size)) streamed.append(delta)
    streamed.finish()
    assert.isAbove(streamed.children.length, 3, `cut while streaming, deltas of ${size}`)
    for (const width of [80, 23])
      assert.deepStrictEqual(streamed.render(width).map(shownRow), whole(width), `deltas of ${size}, width ${width}`)
  }
}

const code = (lines: number) =>
  `text\n\`\`\`ts\n${Array.from({ length: lines }, (_, i) => `const x${i} = "${i}" // line ${i}`).join("\n")}\n\`\`\`\n`

const quote = (lines: number) =>
  `text\n\n${Array.from({ length: lines }, (_, i) => `> quoted line ${i} with **bold ${i}** and \`code\``).join("\n")}\n`

const quotedList = (lines: number) =>
  `text\n\n${Array.from({ length: lines }, (_, i) => `> - item ${i} with **bold ${i}**`).join("\n")}\n`
const nestedQuote = (lines: number) =>
  `text\n\n${Array.from({ length: lines }, (_, i) => `> > nested line ${i} with *it*`).join("\n")}\n`
const quoteAfterProse = (lines: number) =>
  `A paragraph just before:\n${Array.from({ length: lines }, (_, i) => `> quoted line ${i} and \`code\``).join("\n")}\n`

const table = (rows: number) =>
  `Intro:\n\n| # | name | value |\n|---|:---:|---:|\n${Array.from({ length: rows }, (_, i) => `| ${i} | name ${i} | **v${i}** and \`c\` |`).join("\n")}\n\nAfter.\n`

/** Streams `text` up to `upTo` characters, in deltas of 8, and returns its rows as shown (without styles) at `width`. */
const streamedRows = (text: string, upTo: number, width: number) => {
  const streamed = new StreamingMarkdown(plain.markdown)
  for (const delta of inDeltas(text.slice(0, upTo), 8)) streamed.append(delta)
  return { rows: streamed.render(width).map((row) => row.replace(SGR_ALL, "")), children: streamed.children.length }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: styles are escape sequences
const SGR_ALL = /\u001b\[[0-9;]*m/g

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

  it("UI-1 a blockquote of thousands of lines streams in work linear in its length", () => {
    assertLinear(quote)
  })

  it("UI-1 a long blockquote cut between its lines shows exactly as the whole quote rendered at once", () => {
    assertShownWhole(quote(300), colored)
    const mixed = Array.from({ length: 200 }, (_, i) =>
      i % 50 === 7 ? "> - an item" : i % 40 === 3 ? ">" : i % 30 === 0 ? `> ${"wide words ".repeat(12)}` : `>line ${i}`
    )
    assertShownWhole(`Quoted:\n\n${mixed.join("\n")}\nlazy\n\nAfter.\n`)
  })

  it("UI-1 a table of thousands of rows streams in work linear in its length", () => {
    assertLinear(table)
  })

  it("UI-1 a long table cut between its rows shows, once complete, exactly as the whole table rendered at once", () => {
    assertShownWhole(table(300), colored)
    const rows = Array.from({ length: 240 }, (_, i) =>
      i % 29 === 0
        ? `| ${i} | ${"a wide cell that must wrap ".repeat(3)} | x \\| y |`
        : i % 17 === 0
          ? `|${i}|short|`
          : `| ${i} | [link ${i}](https://example.com/${i}) | *it* ${i} |`
    )
    const head = "| n | text | more |\n|:-|-|-:|"
    const longRow = `| 7 | ${"a row longer than the tail ".repeat(90)} | end |`
    assertShownWhole(`Intro.\n\n${head}\n${[...rows.slice(0, 90), longRow, ...rows.slice(90)].join("\n")}\n\nAfter.\n`)
    assertShownWhole(`Table:\n\n${head}\n${rows.join("\n")}\n\nAfter the table.\n`, colored)
    assertShownWhole(`Intro.\n\n${head}\n${rows.join("\n")}\nno pipe here\n| 1 | 2 | 3 |\n# Heading\n\nEnd.\n`)
    assertShownWhole(
      `${"Intro words. ".repeat(40)}\n\n${"It ends with a table. ".repeat(20)}\n\n${head}\n${rows.join("\n")}\n`
    )
  })

  it("UI-1 while a long table streams, its pieces show as one table: one header, joined borders, each row once", () => {
    const text = table(300)
    for (const width of [80, 23]) {
      const { rows, children } = streamedRows(text, text.indexOf("| 250 |"), width)
      assert.isAbove(children, 5, "cut while streaming")
      const starts = (mark: string) => rows.filter((row) => row.startsWith(mark)).length
      assert.strictEqual(starts("┌"), 1)
      assert.strictEqual(starts("└"), 1)
      assert.strictEqual(rows.filter((row) => /│ # +│ name/.test(row)).length, 1, "the header once")
      const numbers = rows.flatMap((row) => /^│ (\d+) /.exec(row)?.[1] ?? [])
      assert.deepStrictEqual(
        numbers.map(Number),
        Array.from({ length: numbers.length }, (_, i) => i)
      )
      assert.isAtLeast(numbers.length, 249)
      // One rule under the header and one between two rows: none missing where a piece ends, none twice.
      assert.strictEqual(starts("├"), numbers.length)
      rows.forEach((row, i) => {
        if (row.startsWith("├")) assert.isTrue(rows[i + 1]!.startsWith("│"), `after row ${i}`)
      })
    }
  })

  it("UI-1 a fence of another character or shorter inside a streamed code block does not end it: what follows stays code", () => {
    const lines = Array.from({ length: 120 }, (_, i) => (i % 10 === 4 ? "" : `# code line ${i} with *no* markup`))
    const body = [...lines.slice(0, 40), "~~~", ...lines.slice(40, 80), "```", "~~~~~", ...lines.slice(80)].join("\n")
    assertShownWhole(`Intro:\n\n\`\`\`\`sh\n${body}\n\`\`\`\`\n\n- after\n- the block\n`, colored)
    assertShownWhole(`Intro:\n\n~~~~\n${body.replace("~~~~~", "~~~~~ not a fence")}\n~~~~~\n\nAfter the block.\n`)
  })

  it("UI-1 a blockquote holding a list, a nested quote, a quote right after a paragraph: each streams in linear work", () => {
    assertLinear(quotedList)
    assertLinear(nestedQuote)
    assertLinear(quoteAfterProse)
  })

  it("UI-1 a long quote holding lists or nested quotes, or right after a paragraph, shows exactly as the whole would", () => {
    assertShownWhole(quotedList(300), colored)
    assertShownWhole(nestedQuote(300), colored)
    assertShownWhole(quoteAfterProse(300), colored)
    const mixed = Array.from({ length: 260 }, (_, i) =>
      i % 61 === 5
        ? "> > a nested line"
        : i % 47 === 9
          ? `> ${i}. numbered ${"wide words ".repeat(9)}`
          : i % 53 === 11
            ? `> ## a heading ${i}`
            : i % 43 === 20
              ? ">   indented under the item"
              : i % 37 === 30
                ? ">"
                : i % 3 === 0
                  ? `> * star item ${i}`
                  : `> - dash item ${i}`
    )
    assertShownWhole(`Just before:\n${mixed.join("\n")}\n\nAfter.\n`)
    assertShownWhole(
      `Nested:\n\n${mixed.map((line) => (line.startsWith(">") ? `> ${line}` : line)).join("\n")}\n\nAfter.\n`
    )
  })
})
