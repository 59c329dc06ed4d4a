// An answer rendered as Markdown while it streams. Re-parsing the whole answer on every frame
// would cost time in its length; instead the text is cut at block boundaries (a blank line outside
// a code fence): the finished blocks are parsed once and cached, only the last block is parsed
// again as deltas arrive. The lines already shown never change, so the screen is only appended to.
// The text is kept as it came and cleaned (`sanitize`) a block at a time, never a delta at a time.
import { Container, Markdown, type MarkdownTheme, Spacer } from "@earendil-works/pi-tui"
import { sanitize } from "./Sanitize.js"
import { markdownOptions } from "./Wrap.js"

/** Where the text may be cut: after the last blank line that is outside a fenced code block. */
export const lastBoundary = (text: string, from: number): number => {
  let boundary = -1
  let fenced = false
  let lineStart = from
  while (lineStart <= text.length) {
    const end = text.indexOf("\n", lineStart)
    const line = end === -1 ? text.slice(lineStart) : text.slice(lineStart, end)
    if (end === -1) break
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    else if (!fenced && line.trim() === "" && lineStart > from) boundary = end + 1
    lineStart = end + 1
  }
  return fenced ? -1 : boundary
}

export class StreamingMarkdown extends Container {
  private text = ""
  /** How much of `text` lives in frozen blocks. */
  private frozen = 0
  private blocks: Array<Markdown> = []
  private tailShown = false
  private readonly tail: Markdown

  constructor(
    private readonly theme: MarkdownTheme,
    private readonly paddingX = 0
  ) {
    super()
    this.tail = new Markdown("", paddingX, 0, theme, undefined, markdownOptions)
  }

  /** Everything received so far. */
  get value(): string {
    return this.text
  }

  append(delta: string): void {
    if (delta === "") return
    this.text += delta
    this.settle()
  }

  setText(text: string): void {
    if (text.startsWith(this.text)) {
      this.append(text.slice(this.text.length))
      return
    }
    this.text = text
    this.frozen = 0
    this.blocks = []
    this.settle(true)
  }

  private settle(rebuild = false): void {
    const cut = lastBoundary(this.text, this.frozen)
    if (cut > this.frozen) {
      const block = sanitize(this.text.slice(this.frozen, cut)).replace(/\n+$/, "")
      if (block.trim() !== "")
        this.blocks.push(new Markdown(block, this.paddingX, 0, this.theme, undefined, markdownOptions))
      this.frozen = cut
      rebuild = true
    }
    const rest = sanitize(this.text.slice(this.frozen))
    this.tail.setText(rest)
    const showTail = rest.trim() !== ""
    if (rebuild || showTail !== this.tailShown) {
      this.tailShown = showTail
      this.clear()
      const parts: Array<Markdown> = showTail ? [...this.blocks, this.tail] : this.blocks
      parts.forEach((part, index) => {
        if (index > 0) this.addChild(new Spacer(1))
        this.addChild(part)
      })
    }
  }
}
