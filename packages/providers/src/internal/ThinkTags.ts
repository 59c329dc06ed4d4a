// Reasoning inside the answer: models served without a reasoning parser (DeepSeek-R1, QwQ and
// Qwen3 on llama.cpp, vLLM or LM Studio as configured by default) stream their thinking as
// `<think>…</think>` at the start of `content`. It is reasoning, shown and stored as such.

import type { ResponsePart } from "@alisio/domain/LanguageModel"

const OPEN = "<think>"
const CLOSE = "</think>"

/** How many characters at the end of `text` could begin `tag`: they wait for the next delta. */
const partialTagAt = (text: string, tag: string): number => {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length
  }
  return 0
}

const leadingSpace = /^\s+/

/**
 * Splits streamed content into reasoning (a `<think>` block that opens the answer) and text. Text
 * goes through untouched once anything but a think block began the answer; tags split across
 * deltas are held back until they are whole.
 */
export class ThinkTags {
  private state: "start" | "thinking" | "text" = "start"
  /** Content held back: the start of the answer, or what may be the beginning of `</think>`. */
  private held = ""
  /**
   * `held` without its leading whitespace, at most a partial `<think>`: trimming all of `held` on
   * each delta made an answer opening with many blank deltas quadratic (200 000 took minutes).
   */
  private heldStart = ""
  /** Whitespace right after a tag belongs to neither side. */
  private skipSpace = false

  push(content: string, out: Array<ResponsePart>): void {
    if (this.state === "text") return this.text(content, out)
    const pending = this.held + content
    this.held = ""
    if (this.state === "start") {
      const start = (this.heldStart + content).trimStart()
      if (start.length < OPEN.length && OPEN.startsWith(start)) {
        this.held = pending
        this.heldStart = start
        return
      }
      this.heldStart = ""
      if (!start.startsWith(OPEN)) {
        this.state = "text"
        return this.text(pending, out)
      }
      this.state = "thinking"
      this.skipSpace = true
      return this.thinking(start.slice(OPEN.length), out)
    }
    this.thinking(pending, out)
  }

  /** The end of the answer: what was held back is given out as what it was. */
  flush(out: Array<ResponsePart>): void {
    const held = this.held
    this.held = ""
    // An answer that was only blank so far (before tool calls, say) shows nothing.
    if (held.length === 0 || (this.state === "start" && held.trim() === "")) return
    if (this.state === "thinking") this.reasoning(held, out)
    else this.text(held, out)
  }

  private thinking(content: string, out: Array<ResponsePart>): void {
    const close = content.indexOf(CLOSE)
    if (close === -1) {
      const keep = partialTagAt(content, CLOSE)
      this.held = content.slice(content.length - keep)
      return this.reasoning(content.slice(0, content.length - keep), out)
    }
    this.reasoning(content.slice(0, close), out)
    this.state = "text"
    this.skipSpace = true
    this.text(content.slice(close + CLOSE.length), out)
  }

  private reasoning(text: string, out: Array<ResponsePart>): void {
    const shown = this.skipSpace ? text.replace(leadingSpace, "") : text
    if (shown.length === 0) return
    this.skipSpace = false
    out.push({ _tag: "ReasoningDelta", text: shown })
  }

  private text(text: string, out: Array<ResponsePart>): void {
    const shown = this.skipSpace ? text.replace(leadingSpace, "") : text
    if (shown.length === 0) return
    this.skipSpace = false
    out.push({ _tag: "TextDelta", text: shown })
  }
}
