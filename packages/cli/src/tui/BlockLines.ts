// What a line of streamed Markdown is, read on its own: where the answer may be cut between lines
// (`StreamingMarkdown.ts`) depends on it. A code fence closes only with its own character, at
// least as long (CommonMark); a table is a header row, a delimiter row with as many cells, and the
// rows that start with a pipe.

/** A line that may start or interrupt a block other than a paragraph, or be a table's row. */
export const BLOCK_START = /^(?:[\s#>|<=~$\\`]|[-*+_](?:[\s*_-]|$)|\d{1,9}[.)](?:\s|$)|\[[^\]]*\]:)|\|/
/** The text of a blockquote's line holding prose: the quote's paragraph goes on. */
export const QUOTED_PROSE = /^> ?(?![\s#>|<=~$\\`]|[-*+_](?:[\s*_-]|$)|\d{1,9}[.)](?:\s|$)|\[[^\]]*\]:|$)/
const LIST_ITEM = /^(?:([-*+])|\d{1,9}([.)])) \S/
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/
/** A row of a table that goes on: a line that starts with a pipe. */
export const TABLE_ROW = /^ {0,3}\|/

export type Kind = "prose" | "item" | "other"

/** What a line is, and for a list item its marker ("-", "*", "+", or "." and ")" of a numbered one). */
export const kindOf = (line: string): { readonly kind: Kind; readonly marker: string } => {
  const item = LIST_ITEM.exec(line)
  if (item !== null) return { kind: "item", marker: item[1] ?? item[2] ?? "" }
  return { kind: BLOCK_START.test(line) ? "other" : "prose", marker: "" }
}

/** Whether a line starts with what may be a code fence (so no cut inside it is safe). */
export const mayBeFence = (line: string): boolean => /^\s*(```|~~~)/.test(line)

/** The fence a line opens a code block with, else "". */
export const opensFence = (line: string): string => {
  const fence = FENCE.exec(line)
  if (fence === null) return ""
  const mark = fence[1]!
  return mark.startsWith("`") && fence[2]!.includes("`") ? "" : mark
}

/** Whether a line closes the code block opened with `mark`: the same character, at least as many, nothing after. */
export const closesFence = (line: string, mark: string): boolean => {
  const fence = FENCE.exec(line)
  return fence !== null && fence[1]![0] === mark[0] && fence[1]!.length >= mark.length && fence[2]!.trim() === ""
}

/** How many cells a table's row has (pipes escaped with a backslash do not count). */
const cellCount = (line: string): number => {
  const cells = line.trim().split(/(?<!\\)\|/)
  if (cells[0]!.trim() === "") cells.shift()
  if (cells.length > 0 && cells.at(-1)!.trim() === "") cells.pop()
  return cells.length
}

/** Whether `delimiter` under `header` makes the two a table's head. */
export const isTableHead = (header: string, delimiter: string): boolean =>
  header.includes("|") &&
  !/^\s/.test(header) &&
  TABLE_DELIMITER.test(delimiter) &&
  cellCount(header) === cellCount(delimiter)
