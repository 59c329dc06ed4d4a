// A real HTTP server on 127.0.0.1 speaking the OpenAI Chat Completions protocol, streamed as
// real servers stream it. Each request to /chat/completions takes the next scripted reply.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export type Reply =
  | {
      readonly kind: "text"
      readonly text: string
      readonly chunks?: number
      readonly delayMs?: number
      readonly stallAfter?: boolean
      /** Silence before the first token (the headers go out at once). */
      readonly firstDelayMs?: number
      /** Nothing is streamed until this settles (a barrier between concurrent requests). */
      readonly after?: Promise<void>
      /** After the first chunk of text, nothing more until this settles (to see a stream half-way). */
      readonly restAfter?: Promise<void>
      /** The finish reason; `stop` unless given. */
      readonly finish?: string
    }
  /** `delayMs`: a pause between the chunks of the arguments (to see a call half-streamed). */
  | {
      readonly kind: "tool"
      readonly id: string
      readonly name: string
      readonly args: unknown
      readonly delayMs?: number
    }
  /** Several tool calls in one response (the model asks for them in parallel). */
  | {
      readonly kind: "tools"
      readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
    }
  /** Sends the headers, then nothing until the client closes the connection. */
  | { readonly kind: "stall" }
  /** An HTTP error with an OpenAI-style body, e.g. 429 with `retry-after`. */
  | {
      readonly kind: "error"
      readonly status: number
      readonly message: string
      readonly headers?: Readonly<Record<string, string>>
    }

export interface RecordedRequest {
  readonly path: string
  /** The `Authorization` header, as sent. */
  readonly authorization?: string | undefined
  readonly body: {
    readonly model?: string
    readonly messages?: ReadonlyArray<{ readonly role: string; readonly content?: unknown }>
  } & Record<string, unknown>
}

export interface OpenAiTestServer {
  readonly baseURL: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** How many streamed responses the client closed before they ended. */
  readonly closedEarly: () => number
  readonly close: () => Promise<void>
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "test-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra
  })}\n\n`

const usageChunk = `data: ${JSON.stringify({
  id: "chatcmpl-test",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "test-model",
  choices: [],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
})}\n\n`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts the server; `replies` answer the chat requests in order, `replyFor` may choose per request instead. */
export const startOpenAiServer = async (options: {
  readonly replies?: ReadonlyArray<Reply>
  readonly replyFor?: (request: RecordedRequest, index: number) => Reply
  readonly models?: ReadonlyArray<string>
  /** The body `/models` answers with, as it is, instead of the list of `models`. */
  readonly modelsBody?: string
}): Promise<OpenAiTestServer> => {
  const requests: Array<RecordedRequest> = []
  let closedEarly = 0
  let chatIndex = 0

  const stream = async (reply: Reply, res: ServerResponse, isOpen: () => boolean) => {
    if (reply.kind === "error") {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
      res.end(JSON.stringify({ error: { message: reply.message, type: "error", code: null } }))
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
    if (reply.kind === "stall") return
    res.write(chunk({ role: "assistant", content: "" }))
    if (reply.kind === "text" && reply.after !== undefined) await reply.after
    if (reply.kind === "text" && reply.firstDelayMs !== undefined) await sleep(reply.firstDelayMs)
    if (reply.kind === "text") {
      const count = Math.max(1, reply.chunks ?? 1)
      const size = Math.ceil(reply.text.length / count)
      for (let i = 0; i < reply.text.length && isOpen(); i += size) {
        res.write(chunk({ content: reply.text.slice(i, i + size) }))
        if (i === 0 && reply.restAfter !== undefined) await reply.restAfter
        if (reply.delayMs !== undefined) await sleep(reply.delayMs)
      }
      if (reply.stallAfter === true) return
      res.write(chunk({}, reply.finish ?? "stop"))
    } else if (reply.kind === "tools") {
      reply.calls.forEach((call, index) => {
        res.write(
          chunk({
            tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }]
          })
        )
        res.write(chunk({ tool_calls: [{ index, function: { arguments: JSON.stringify(call.args) } }] }))
      })
      res.write(chunk({}, "tool_calls"))
    } else {
      const args = JSON.stringify(reply.args)
      const half = Math.ceil(args.length / 2)
      res.write(
        chunk({
          tool_calls: [{ index: 0, id: reply.id, type: "function", function: { name: reply.name, arguments: "" } }]
        })
      )
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }))
      if (reply.delayMs !== undefined) await sleep(reply.delayMs)
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }))
      res.write(chunk({}, "tool_calls"))
    }
    res.write(usageChunk)
    res.write("data: [DONE]\n\n")
    res.end()
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => {
      const path = (req.url ?? "/").replace(/\?.*$/, "")
      const text = Buffer.concat(parts).toString("utf8")
      const body = text === "" ? {} : (JSON.parse(text) as RecordedRequest["body"])
      const recorded = { path, body, authorization: req.headers.authorization }
      requests.push(recorded)
      if (req.method === "GET" && path.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(
          options.modelsBody ??
            JSON.stringify({
              object: "list",
              data: (options.models ?? ["test-model"]).map((id) => ({ id, object: "model", owned_by: "test" }))
            })
        )
        return
      }
      if (!path.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `no route ${path}` } }))
        return
      }
      const index = chatIndex++
      const reply = options.replyFor?.(recorded, index) ?? options.replies?.[index]
      if (reply === undefined) {
        res.writeHead(500, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `no scripted reply for request ${index + 1}` } }))
        return
      }
      let open = true
      res.on("close", () => {
        if (!res.writableEnded) closedEarly += 1
        open = false
      })
      void stream(reply, res, () => open)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    closedEarly: () => closedEarly,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
