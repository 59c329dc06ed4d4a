import type { ResponsePart } from "@alisio/domain/LanguageModel"
import type { Assembler } from "./Assembler.js"
import type { Failure } from "./ErrorMapping.js"
import { SseDecoder, type SseEvent } from "./Sse.js"

/** What one `next()` produced. */
export type Pulled =
  | { readonly _tag: "Parts"; readonly parts: Array<ResponsePart> }
  | { readonly _tag: "End" }
  | { readonly _tag: "Failed"; readonly failure: Failure }
  /** Reading the body threw (connection reset, aborted): the caller maps the cause. */
  | { readonly _tag: "ReadError"; readonly cause: unknown }

const end: Pulled = { _tag: "End" }

/** How much of a body without events is kept to be shown. */
const HEAD = 200

/** A body that starts like an event stream (a comment or a field) is one, even without events. */
const SSE_LINE = /^(?::|(?:data|event|id|retry|error)(?::|$))/m

/**
 * Reads an SSE body into response parts. `next()` keeps reading until a read completes at least one
 * part, so keep-alive comments and partial lines are never reported as progress. Parts produced
 * before a failure in the same read are returned first; the failure comes on the following call.
 * Plain promises on purpose: one awaited read per network chunk, no per-read effect overhead.
 */
export class PartReader {
  private readonly decoder = new SseDecoder()
  private readonly events: Array<SseEvent> = []
  private finished = false
  private failed: Failure | undefined = undefined
  private bytes = 0
  /** The start of the body, while no event was decoded: what to show when it holds none. */
  private head = ""
  private sawEvent = false
  /** Whether the body was read to its end (then the connection can be reused as is). */
  eof = false
  /** Whether `settle` ended the response: its body will not end by itself. */
  settled = false

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly assembler: Assembler,
    private readonly bound: {
      /** The most the body may hold, and the failure past it (a line or a stream without end). */
      readonly maxBytes: number
      readonly failure: () => Failure
      /** A body that ended without a single event (a plain-text page), given its first characters. */
      readonly notAStream: (head: string) => Failure
      /** An event the assembler could not take (a tool call's arguments nested past the stack). */
      readonly unreadable: (cause: unknown) => Failure
    }
  ) {}

  async next(): Promise<Pulled> {
    try {
      return await this.read()
    } catch (cause) {
      // Hostile input must end as a typed failure, never as a defect of the run.
      this.failed = this.bound.unreadable(cause)
      return { _tag: "Failed", failure: this.failed }
    }
  }

  private async read(): Promise<Pulled> {
    while (true) {
      if (this.failed !== undefined) return { _tag: "Failed", failure: this.failed }
      if (this.finished) return end
      let chunk: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>
      try {
        chunk = await this.reader.read()
      } catch (cause) {
        return { _tag: "ReadError", cause }
      }
      if (chunk.done) {
        this.eof = true
        this.decoder.end(this.events)
      } else {
        this.bytes += chunk.value.byteLength
        if (this.bytes > this.bound.maxBytes) {
          this.failed = this.bound.failure()
          continue
        }
        if (!this.sawEvent && this.head.length < HEAD) {
          this.head += new TextDecoder().decode(chunk.value.subarray(0, HEAD))
        }
        this.decoder.push(chunk.value, this.events)
      }
      if (this.events.length > 0) this.sawEvent = true
      const out: Array<ResponsePart> = []
      for (const event of this.events) {
        const step = this.assembler.onEvent(event, out)
        if (step === undefined) continue
        if (step === "done") this.finished = true
        else this.failed = step
        break
      }
      this.events.length = 0
      if (chunk.done && !this.finished && this.failed === undefined) {
        const text = this.head.trim()
        const last = this.sawEvent || text === "" || SSE_LINE.test(text) ? this.assembler.onEnd(out) : undefined
        if (last === undefined) {
          this.failed = this.bound.notAStream(text.slice(0, HEAD))
          continue
        }
        if (last === "done") this.finished = true
        else this.failed = last
      }
      if (out.length > 0) return { _tag: "Parts", parts: out }
    }
  }

  /** Whether the response has its finish and waits only for its end marker (see `Assembler.finishing`). */
  get finishing(): boolean {
    return !this.finished && this.failed === undefined && this.assembler.finishing?.() === true
  }

  /**
   * Ends a finishing response as its end would have: for a server that sends the finish and then
   * keeps the connection open without `[DONE]`. A `next()` still pending is abandoned: the caller
   * aborts the connection, and what that read brings is not used.
   */
  settle(): Pulled {
    this.settled = true
    const out: Array<ResponsePart> = []
    const last = this.assembler.onEnd(out)
    if (last === "done") this.finished = true
    else this.failed = last
    return out.length > 0 ? { _tag: "Parts", parts: out } : last === "done" ? end : { _tag: "Failed", failure: last }
  }

  /**
   * Reads what follows the final event up to the end of the body. Servers close right after it; a
   * body read to its end leaves the connection reusable, where an abort would tear it down.
   */
  async drain(): Promise<void> {
    try {
      while (!(await this.reader.read()).done) {
        // nothing is expected after the final event
      }
      this.eof = true
    } catch {
      // the connection is aborted by the caller anyway
    }
  }
}
