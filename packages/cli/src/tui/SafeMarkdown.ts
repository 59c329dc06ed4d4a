// pi-tui's Markdown lays a block out by recursion, one level per quote or list it is nested in: an
// answer of two thousand `>` overflows the stack, and the error thrown from the render timer ended
// the whole interface, the terminal left without its cursor. Text too deep to lay out is shown as
// it is, wrapped to the width.
import { Markdown, type MarkdownTheme } from "@earendil-works/pi-tui"
import { truncateToWidth } from "./PiTuiCore.js"
import { markdownOptions, wrapLine } from "./Wrap.js"

export class SafeMarkdown extends Markdown {
  private source: string
  private plain: { readonly width: number; readonly lines: ReadonlyArray<string> } | undefined

  constructor(
    text: string,
    private readonly paddingLeft: number,
    paddingY: number,
    theme: MarkdownTheme
  ) {
    super(text, paddingLeft, paddingY, theme, undefined, markdownOptions)
    this.source = text
  }

  override setText(text: string): void {
    this.source = text
    this.plain = undefined
    super.setText(text)
  }

  override render(width: number): ReadonlyArray<string> {
    try {
      return super.render(width)
    } catch (error) {
      if (!(error instanceof RangeError)) throw error
      if (this.plain?.width !== width) this.plain = { width, lines: this.asText(width) }
      return this.plain.lines
    }
  }

  private asText(width: number): ReadonlyArray<string> {
    const indent = " ".repeat(this.paddingLeft)
    const room = Math.max(1, width - 2 * this.paddingLeft)
    return this.source
      .split("\n")
      .flatMap((line) => wrapLine(line, room))
      .map((line) => truncateToWidth(indent + line, width, ""))
  }
}
