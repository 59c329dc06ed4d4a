// Over HTTP the SDK reads a server's answer whole: a JSON body, or one event of an SSE stream. As
// over stdio, one message may have 10 MB (MCP-1). Each message is held until it ends, up to that
// size; one past it is read on to its end keeping only its start and end, and replaced by an error
// answer to the request it names (`answers.ts`), so the call fails at once, memory stays bounded.
import { oversizedAnswer } from "./answers.js"
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "./thirdParty.js"

const EDGE_BYTES = 512
const LF = 10
const CR = 13

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

/** One message as it arrives: held while small, else only its edges. */
const makeMessage = (max: number) => {
  let parts: Array<Uint8Array> = []
  let size = 0
  let head: Buffer | undefined
  let tail = Buffer.alloc(0)
  return {
    add: (bytes: Uint8Array) => {
      size += bytes.length
      if (head === undefined && size <= max) return void parts.push(bytes)
      if (head === undefined) {
        const held = Buffer.concat([...parts, bytes])
        head = held.subarray(0, EDGE_BYTES)
        tail = held.subarray(Math.max(0, held.length - EDGE_BYTES))
        parts = []
        return
      }
      const joined = Buffer.concat([tail, bytes])
      tail = joined.subarray(Math.max(0, joined.length - EDGE_BYTES))
    },
    empty: () => size === 0,
    /** The message, or `undefined` when it was too large; `edges` then give its start and end. */
    whole: (): Uint8Array | undefined => (head === undefined ? Buffer.concat(parts) : undefined),
    edges: () => ({ head: head?.toString("utf8") ?? "", tail: tail.toString("utf8") })
  }
}

const encoder = new TextEncoder()

const replacement = (head: string, tail: string, max: number): string | undefined => {
  const answer = oversizedAnswer(head, tail, max)
  return answer === undefined ? undefined : JSON.stringify(answer)
}

/** A JSON body: passed on whole when it ends, or replaced by the error answer. */
const boundedJson = (max: number) => {
  const message = makeMessage(max)
  return new TransformStream<Uint8Array, Uint8Array>({
    transform: (chunk) => message.add(chunk),
    flush: (controller) => {
      const whole = message.whole()
      if (whole !== undefined) return controller.enqueue(whole)
      const { head, tail } = message.edges()
      const answer = replacement(head, tail, max)
      controller.enqueue(encoder.encode(answer ?? "{}"))
    }
  })
}

/** The JSON of an oversized event's `data:` lines, from the event's edges. */
const dataOf = (edge: string, fromEnd: boolean): string => {
  const lines = edge.split(/\r?\n/).filter((line) => line.startsWith("data:"))
  const line = (fromEnd ? lines.at(-1) : lines[0]) ?? (fromEnd ? edge : "")
  return line.startsWith("data:") ? line.slice(5).trimStart() : line
}

/** An SSE stream: each event passed on when it ends (a blank line), an oversized one replaced. */
const boundedEvents = (max: number) => {
  let message = makeMessage(max)
  let afterNewline = false
  const end = (controller: TransformStreamDefaultController<Uint8Array>) => {
    const whole = message.whole()
    if (whole !== undefined) {
      controller.enqueue(whole)
    } else {
      const { head, tail } = message.edges()
      const answer = replacement(dataOf(head, false), dataOf(tail.replace(/\s+$/, ""), true), max)
      if (answer !== undefined) controller.enqueue(encoder.encode(`event: message\ndata: ${answer}\n\n`))
    }
    message = makeMessage(max)
  }
  return new TransformStream<Uint8Array, Uint8Array>({
    transform: (chunk, controller) => {
      let start = 0
      for (let index = 0; index < chunk.length; index++) {
        const byte = chunk[index]
        if (byte === LF) {
          if (afterNewline) {
            message.add(chunk.subarray(start, index + 1))
            start = index + 1
            end(controller)
            afterNewline = false
            continue
          }
          afterNewline = true
        } else if (byte !== CR) {
          afterNewline = false
        }
      }
      if (start < chunk.length) message.add(chunk.subarray(start))
    },
    flush: (controller) => {
      if (!message.empty()) end(controller)
    }
  })
}

/** `fetch`, with each answer a server sends bounded to `max` bytes. */
export const boundedFetch =
  (base: FetchLike = fetch, max: number = STDIO_DEFAULT_MAX_BUFFER_SIZE): FetchLike =>
  async (url, init) => {
    const response = await base(url, init)
    const type = response.headers.get("content-type") ?? ""
    const events = type.includes("text/event-stream")
    if (response.body === null || (!events && !type.includes("application/json"))) return response
    return new Response(response.body.pipeThrough(events ? boundedEvents(max) : boundedJson(max)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }
