/**
 * `text.slice(0, end)`, one shorter when the cut would split a surrogate pair (an emoji): half a
 * pair is no text, and a provider may refuse a request that holds one ("surrogates not allowed").
 */
export const headOf = (text: string, end: number): string => {
  if (end >= text.length) return text
  const last = text.charCodeAt(end - 1)
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, end - 1) : text.slice(0, end)
}

/**
 * Collects a command's output up to a cap, keeping its head and its tail: the start says what
 * ran, the end says how it finished. Cuts never split a surrogate pair.
 */
export class OutputBuffer {
  private head = ""
  private headDone = false
  private tail = ""
  private cut = 0

  constructor(private readonly maxChars: number) {}

  append(text: string): void {
    if (!this.headDone) {
      const headRoom = Math.ceil(this.maxChars / 2) - this.head.length
      const taken = headOf(text, Math.max(0, headRoom))
      this.head += taken
      text = text.slice(taken.length)
      if (text.length === 0) return
      // What comes after goes to the tail, in order, even when the head has a character of room left.
      this.headDone = true
    }
    this.tail += text
    const tailMax = Math.floor(this.maxChars / 2)
    // Trim in batches so appending stays linear.
    if (this.tail.length > tailMax * 2) this.trimTail(tailMax)
  }

  toString(): string {
    this.trimTail(Math.floor(this.maxChars / 2))
    if (this.cut === 0) return this.head + this.tail
    const headEnd = this.head.endsWith("\n") ? "" : "\n"
    return `${this.head}${headEnd}[… ${this.cut} characters of output cut …]\n${this.tail}`
  }

  private trimTail(max: number): void {
    if (this.tail.length <= max) return
    let start = this.tail.length - max
    const first = this.tail.charCodeAt(start)
    if (first >= 0xdc00 && first <= 0xdfff) start++
    this.cut += start
    this.tail = this.tail.slice(start)
  }
}
