// A piece of a block cut between its lines while it streams, drawn so that the pieces one under
// the other show as the block would: a piece of a code block without the fence it goes on from or
// the one closing it for the piece; a piece of a table without the header it is parsed under (the
// rule under the header stays: it is the rule between the rows) or the bottom border closing it.

import type { MarkdownTheme } from "@earendil-works/pi-tui"
import { wrapTextWithAnsi } from "./PiTuiCore.js"
import { SafeMarkdown } from "./SafeMarkdown.js"

/** What goes before a piece's text and is not drawn: nothing, a code block's fence, a table's head. */
export type Head = "none" | "fence" | "table"

/** The rows of a table's head as drawn: its border and header, or (too narrow for a table) its text. */
const headRows = (lines: ReadonlyArray<string>, head: string, width: number): number => {
  if (lines[0]?.trimStart().startsWith("┌") !== true) return wrapTextWithAnsi(head, Math.max(1, width)).length
  const rule = lines.findIndex((line) => line.trimStart().startsWith("├"))
  return rule === -1 ? 0 : rule
}

export class Piece extends SafeMarkdown {
  /** What goes before the text, not drawn; and what closes the piece, not drawn either. */
  head: Head = "none"
  last: Head = "none"
  /** The text of the head (a table's header and delimiter rows). */
  headText = ""
  private shown:
    | { readonly from: ReadonlyArray<string>; readonly width: number; readonly lines: ReadonlyArray<string> }
    | undefined

  constructor(
    text: string,
    private readonly padding: number,
    theme: MarkdownTheme
  ) {
    super(text, padding, 0, theme)
  }

  override render(width: number): ReadonlyArray<string> {
    const lines = super.render(width)
    if (this.head === "none" && this.last === "none") return lines
    if (this.shown?.from === lines && this.shown.width === width) return this.shown.lines
    const top =
      this.head === "fence" ? 1 : this.head === "table" ? headRows(lines, this.headText, width - 2 * this.padding) : 0
    const bottom =
      this.last === "fence" || (this.last === "table" && lines.at(-1)?.trimStart().startsWith("└") === true) ? 1 : 0
    this.shown = { from: lines, width, lines: lines.slice(top, lines.length - bottom) }
    return this.shown.lines
  }
}
