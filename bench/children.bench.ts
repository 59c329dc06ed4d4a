// Child sessions on the FakeProvider: 100 children of one root (each one tool call and one
// answer) next to the same 100 runs in sequence; and the cancel latency of a running 50-run tree
// (interrupt → every terminal event stored).

import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as ChildSessions from "@alisio/runtime/ChildSessions"
import * as Interaction from "@alisio/runtime/Interaction"
import * as RunEvents from "@alisio/runtime/RunEvents"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Tools from "@alisio/runtime/Tools"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import { echoTool } from "../packages/runtime/test/helpers/tools.js"
import { row } from "./measure.js"

const fanOut = (children: ChildSessions.ChildSessions["Type"]) =>
  defineTool({
    name: "fan_out",
    description: "Runs children and waits for them all.",
    effect: "internal",
    input: Schema.Struct({ prompt: Schema.String, count: Schema.Number }),
    run: ({ count, prompt }) =>
      Effect.forEach(Array.from({ length: count }), () => children.spawn({ prompt }), {
        concurrency: "unbounded"
      }).pipe(
        Effect.flatMap((handles) => Effect.forEach(handles, (h) => children.await(h), { concurrency: "unbounded" })),
        Effect.as(textResult("all done")),
        Effect.orDie
      )
  })

const firstUserText = (request: ModelRequest) => JSON.stringify(request.messages.find((m) => m.role === "user"))
const answered = (request: ModelRequest) => request.messages.some((m) => m.role === "tool")

const script: Fake.Script = (request, index) => {
  const prompt = firstUserText(request)
  if (prompt.includes("root-fan")) {
    return answered(request)
      ? Fake.answer("root done")
      : Fake.callTools({ id: `r${index}`, name: "fan_out", args: { prompt: "work", count: 100 } })
  }
  if (prompt.includes("root-hang")) {
    return answered(request)
      ? Fake.answer("never")
      : Fake.callTools({ id: `h${index}`, name: "fan_out", args: { prompt: "hang", count: 49 } })
  }
  if (prompt.includes("hang")) return [...Fake.text("busy"), Fake.silence]
  return answered(request) ? Fake.answer("ok") : Fake.callTools({ id: `c${index}`, name: "echo", args: { text: "x" } })
}

const layer = AgentRuntime.layer({
  tools: [echoTool],
  interaction: Interaction.layerHeadless({ approveAll: true }),
  childSessions: { maxConcurrentPerRoot: 200 }
}).pipe(Layer.provideMerge(Fake.layer(script)), Layer.provideMerge(SessionStore.layerMemory))

const measure = async <A>(
  runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>,
  effect: Effect.Effect<A, unknown, never>
) => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  await runtime.runPromise(effect)
  const used = process.cpuUsage(cpu)
  return { wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 }
}

export const run = async (): Promise<void> => {
  const runtime = ManagedRuntime.make(layer)
  try {
    await runtime.runPromise(
      Effect.gen(function* () {
        yield* (yield* Tools.Tools).register(fanOut(yield* ChildSessions.ChildSessions))
      })
    )
    const runner = () => Effect.flatMap(Runner.Runner, (r) => Effect.succeed(r))
    const sequence = Effect.flatMap(runner(), (r) =>
      Effect.forEach(Array.from({ length: 100 }), () => r.run({ cwd: "/tmp", prompt: "work", model: "fake" }), {
        discard: true
      })
    )
    const tree = Effect.flatMap(runner(), (r) => r.run({ cwd: "/tmp", prompt: "root-fan", model: "fake" }))
    await measure(runtime as never, sequence as never)
    await measure(runtime as never, tree as never)
    const seq = await measure(runtime as never, sequence as never)
    const fan = await measure(runtime as never, tree as never)
    row("100 runs in sequence: wall", seq.wallMs, "ms")
    row("100 runs in sequence: CPU", seq.cpuMs, "ms")
    row("100 children of one root: wall", fan.wallMs, "ms", seq.wallMs)
    row("100 children of one root: CPU", fan.cpuMs, "ms", seq.cpuMs)

    const latencies: Array<number> = []
    for (let attempt = 0; attempt < 5; attempt++) {
      const latency = await runtime.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const feed = yield* (yield* RunEvents.RunEvents).subscribe
            const r = yield* Runner.Runner
            const fiber = yield* Effect.fork(r.run({ cwd: "/tmp", prompt: "root-hang", model: "fake" }))
            const streaming = new Set<string>()
            while (streaming.size < 49) {
              const event = yield* Queue.take(feed)
              if (event.type === "text_delta") streaming.add(event.runId)
            }
            const started = performance.now()
            yield* Fiber.interrupt(fiber)
            const ms = performance.now() - started
            const terminals = (yield* Queue.takeAll(feed))
              .pipe((chunk) => [...chunk])
              .filter((e) => e.type === "run_cancelled")
            if (terminals.length !== 50)
              return yield* Effect.dieMessage(`expected 50 cancelled runs, saw ${terminals.length}`)
            return ms
          })
        )
      )
      latencies.push(latency)
    }
    latencies.sort((a, b) => a - b)
    row("cancel a running 50-run tree (interrupt → 50 run_cancelled stored), median", latencies[2]!, "ms")
  } finally {
    await runtime.dispose()
  }
}
