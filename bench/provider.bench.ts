// The OpenAI-compatible adapter: CPU per 1 000 streamed deltas, next to a floor that reads the same
// SSE bytes with `fetch`. The server runs in a child process so only the client's CPU is counted.

import { spawn } from "node:child_process"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { median, row } from "./measure.js"

const deltas = 1000
const runs = 40

const serverScript = `
const http = require("node:http")
const deltas = ${deltas}
const events = []
events.push('data: ' + JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }) + '\\n\\n')
for (let i = 0; i < deltas; i++) {
  events.push('data: ' + JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "m", system_fingerprint: "fp", choices: [{ index: 0, delta: { content: " word" + i }, logprobs: null, finish_reason: null }] }) + '\\n\\n')
}
events.push('data: ' + JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + '\\n\\n')
events.push('data: ' + JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 5, completion_tokens: deltas, total_tokens: deltas + 5 } }) + '\\n\\n')
events.push('data: [DONE]\\n\\n')
const server = http.createServer((req, res) => {
  req.resume()
  req.on("end", async () => {
    res.writeHead(200, { "content-type": "text/event-stream" })
    // Like a real server: events written as they are produced, a few at a time.
    for (let i = 0; i < events.length; i += 10) {
      res.write(events.slice(i, i + 10).join(""))
      await new Promise((resolve) => setImmediate(resolve))
    }
    res.end()
  })
})
server.listen(0, "127.0.0.1", () => console.log(server.address().port))
`

const startServer = (): Promise<{ readonly port: number; readonly stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", serverScript], { stdio: ["ignore", "pipe", "inherit"] })
    child.once("error", reject)
    child.stdout.once("data", (data: Buffer) =>
      resolve({ port: Number(data.toString().trim()), stop: () => child.kill() })
    )
  })

export const run = async (): Promise<void> => {
  const server = await startServer()
  try {
    const baseURL = `http://127.0.0.1:${server.port}/v1`
    const requestBody = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true })

    const floor = async (): Promise<void> => {
      const response = await fetch(`${baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: requestBody
      })
      const reader = response.body!.getReader()
      while (!(await reader.read()).done) {
        // only the bytes
      }
    }

    // What parsing alone costs: the same bytes, cut into events and JSON.parse'd, without the adapter.
    const parseFloor = async (): Promise<void> => {
      const response = await fetch(`${baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: requestBody
      })
      const decoder = new TextDecoder()
      let rest = ""
      for await (const bytes of response.body!) {
        const events = (rest + decoder.decode(bytes, { stream: true })).split("\n\n")
        rest = events.pop()!
        for (const event of events) if (event.startsWith("data: {")) JSON.parse(event.slice(6))
      }
    }

    const model = OpenAiCompatible.make({ baseURL })
    const request = {
      model: "m",
      messages: [{ role: "user" as const, content: [{ _tag: "text" as const, text: "hi" }] }],
      tools: [],
      maxOutputTokens: 100
    }
    let parts = 0
    const adapter = Stream.runForEachChunk(model.stream(request), (chunk) =>
      Effect.sync(() => {
        parts += Chunk.size(chunk)
      })
    )

    // Both are measured inside one running fiber, as the runner consumes a stream (no per-stream
    // `runPromise`), alternating so that load from elsewhere hits both alike.
    const cpuOf = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        const start = process.cpuUsage()
        return Effect.map(effect, () => {
          const used = process.cpuUsage(start)
          return (used.user + used.system) / 1000
        })
      })
    const floorCpu: Array<number> = []
    const parseCpu: Array<number> = []
    const adapterCpu: Array<number> = []
    await Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < 5; i++) {
          yield* Effect.promise(floor)
          yield* Effect.promise(parseFloor)
          yield* adapter
        }
        parts = 0
        for (let i = 0; i < runs; i++) {
          floorCpu.push(yield* cpuOf(Effect.promise(floor)))
          parseCpu.push(yield* cpuOf(Effect.promise(parseFloor)))
          adapterCpu.push(yield* cpuOf(adapter))
        }
      })
    )
    if (parts !== runs * (deltas + 1)) throw new Error(`expected ${runs * (deltas + 1)} parts, got ${parts}`)
    const floorMs = median(floorCpu)
    row("fetch, raw SSE bytes (floor), CPU / 1 000 deltas", floorMs, "ms")
    row("fetch + split + JSON.parse, CPU / 1 000 deltas", median(parseCpu), "ms", floorMs)
    row("OpenAiCompatible.stream, CPU / 1 000 deltas", median(adapterCpu), "ms", floorMs)
  } finally {
    server.stop()
  }
}
