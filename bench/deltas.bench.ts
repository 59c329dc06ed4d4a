// A run's CPU per 1 000 streamed deltas in one warm process: the real runner on the real OpenAI
// adapter (SSE decode, assembly, the stream pull and watchdog, the events and an `onEvent` like
// `alisio run`'s), next to a floor that reads the same response with `fetch` and parses it the way
// floor-agent.mjs does. The server runs in a child process, so only the client's CPU is counted;
// the two take turns. Less noisy than the per-delta goal, which spawns the CLI (start-up varies).

import { spawn } from "node:child_process"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { median, row } from "./measure.js"

const small = 200
const large = 10_200
const runs = 25

// Every delta written on its own, as openaiServer.ts does; a read then brings many at once.
const serverScript = `
const http = require("node:http")
const events = (n) => {
  const out = []
  for (let i = 0; i < n; i++) out.push('data: ' + JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "bench-model", choices: [{ index: 0, delta: { content: "word " }, finish_reason: null }] }) + '\\n\\n')
  out.push('data: ' + JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "bench-model", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + '\\n\\n')
  out.push('data: [DONE]\\n\\n')
  return out
}
const bySize = { small: events(${small}), large: events(${large}) }
http.createServer((req, res) => {
  let body = ""
  req.on("data", (d) => { body += d })
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" })
    for (const event of bySize[body.includes("LARGE") ? "large" : "small"]) res.write(event)
    res.end()
  })
}).listen(0, "127.0.0.1", function () { console.log(this.address().port) })
`

const startServer = (): Promise<{ readonly port: number; readonly stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", serverScript], { stdio: ["ignore", "pipe", "inherit"] })
    child.once("error", reject)
    child.stdout.once("data", (data: Buffer) =>
      resolve({ port: Number(data.toString().trim()), stop: () => child.kill() })
    )
  })

const cpuOf = async (effect: () => Promise<unknown>): Promise<number> => {
  const start = process.cpuUsage()
  await effect()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

export const run = async (): Promise<void> => {
  const server = await startServer()
  const baseURL = `http://127.0.0.1:${server.port}/v1`
  const runtime = ManagedRuntime.make(
    AgentRuntime.layer({ tools: [], interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
      Layer.provideMerge(OpenAiCompatible.layer({ baseURL })),
      Layer.provideMerge(SessionStore.layerMemory)
    )
  )
  let answer = ""
  const alisio = (prompt: string) => () =>
    runtime.runPromise(
      Effect.flatMap(Runner.Runner, (runner) =>
        runner.run({
          cwd: "/tmp",
          prompt,
          model: "bench-model",
          onEvent: (event) =>
            Effect.flatMap(Clock.currentTimeMillis, () => {
              if (event.type === "text_delta") answer += event.data.text
              return Effect.void
            })
        })
      )
    )
  const floor = (prompt: string) => async () => {
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "bench-model", messages: [{ role: "user", content: prompt }], stream: true })
    })
    const decoder = new TextDecoder()
    let buffer = ""
    for await (const bytes of response.body!) {
      buffer += decoder.decode(bytes, { stream: true })
      let end = buffer.indexOf("\n\n")
      while (end >= 0) {
        const event = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = event
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trim())
          .join("")
        if (data !== "" && data !== "[DONE]") {
          const delta = JSON.parse(data).choices?.[0]?.delta ?? {}
          if (delta.content) answer += delta.content
        }
        end = buffer.indexOf("\n\n")
      }
    }
  }
  try {
    const tasks = [floor("small"), floor("LARGE"), alisio("small"), alisio("LARGE")]
    for (let i = 0; i < 5; i++) for (const task of tasks) await task()
    answer = ""
    const samples: Array<Array<number>> = tasks.map(() => [])
    for (let i = 0; i < runs; i++) {
      for (const [index, task] of tasks.entries()) {
        samples[index]!.push(await cpuOf(task))
        // Both sides must have streamed the whole answer for the figures to mean anything.
        const words = index % 2 === 0 ? small : large
        if (answer.length !== words * 5) throw new Error(`expected ${words} deltas, got ${answer.length / 5}`)
        answer = ""
      }
    }
    const [floorSmall, floorLarge, alisioSmall, alisioLarge] = samples.map(median) as [number, number, number, number]
    const per = (a: number, b: number) => ((b - a) * 1000) / (large - small)
    row("floor: fetch + SSE split + JSON.parse, CPU / 1 000 deltas", per(floorSmall, floorLarge), "ms")
    row(
      "runner on the OpenAI adapter, CPU / 1 000 deltas",
      per(alisioSmall, alisioLarge),
      "ms",
      per(floorSmall, floorLarge)
    )
    row(`runner on the OpenAI adapter, a one-turn run of ${small} deltas`, alisioSmall, "ms")
  } finally {
    server.stop()
    await runtime.dispose()
  }
}
