/**
 * Collects a command's output up to a cap, keeping its head and its tail: the start says what
 * ran, the end says how it finished.
 */
export class OutputBuffer {
  private head = ""
  private tail = ""
  private cut = 0

  constructor(private readonly maxChars: number) {}

  append(text: string): void {
    const headRoom = Math.ceil(this.maxChars / 2) - this.head.length
    if (headRoom > 0) {
      this.head += text.slice(0, headRoom)
      text = text.slice(headRoom)
      if (text.length === 0) return
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
    this.cut += this.tail.length - max
    this.tail = this.tail.slice(this.tail.length - max)
  }
}
