// Runner overhead on the FakeProvider: per turn and per 1 000 text deltas, next to a floor that
// consumes the same part stream with a bare loop, in the same run. Real SQLite in memory.

import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import * as Runner from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { echoTool } from "../packages/runtime/test/helpers/tools.js"
import { median, row } from "./measure.js"

const deltas = (n: number): Fake.Response => [
  ...Array.from({ length: n }, (_, i) => Fake.text(` w${i}`)[0]!),
  Fake.finish("stop")
]

const layerFor = (script: Fake.Script) =>
  AgentRuntime.layer({ tools: [echoTool], interaction: Interaction.layerHeadless({ approveAll: true }) }).pipe(
    Layer.provideMerge(Fake.layer(script)),
    Layer.provideMerge(SessionStore.layerMemory)
  )

const turns = 20
const toolTurn = Fake.callTools({ id: "c", name: "echo", args: { text: "x" } })
const big = deltas(1000)
const small = deltas(1)

/** One fake for every run, choosing by prompt: `1000`, `1` deltas, or `turns` tool-calling turns. */
const script: Fake.Script = (request) => {
  const prompt = JSON.stringify(request.messages[0])
  if (prompt.includes("turns")) {
    const done = request.messages.filter((m) => m.role === "tool").length
    return done < turns - 1 ? toolTurn : Fake.answer("done")
  }
  return prompt.includes("1000") ? big : small
}

const cpuOf = async (runs: number, effect: () => Promise<unknown>): Promise<number> => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage()
    await effect()
    const used = process.cpuUsage(start)
    samples.push((used.user + used.system) / 1000)
  }
  return median(samples)
}

export const run = async (): Promise<void> => {
  const runtime = ManagedRuntime.make(layerFor(script))
  const runOnce =
    (prompt: string, maxTurns = 100) =>
    () =>
      runtime.runPromise(
        Effect.flatMap(Runner.Runner, (runner) =>
          runner.run({ cwd: "/tmp", prompt, model: "fake", limits: { maxTurns } })
        )
      )
  const floorOnce = (response: Fake.Response, times: number) => () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { model } = yield* Fake.make(Array.from({ length: times }, () => response))
        for (let t = 0; t < times; t++) {
          let _text = ""
          yield* Stream.runForEach(
            model.stream({ model: "fake", messages: [], tools: [], maxOutputTokens: 1 }),
            (part) =>
              Effect.sync(() => {
                if (part._tag === "TextDelta") _text += part.text
              })
          )
        }
      })
    )
  try {
    // Warm the JIT on every path first.
    await cpuOf(30, runOnce("1000"))
    await cpuOf(30, runOnce("1"))
    await cpuOf(10, runOnce("turns"))
    await cpuOf(30, floorOnce(big, 1))
    await cpuOf(30, floorOnce(small, 1))
    await cpuOf(10, floorOnce(toolTurn, turns))

    const floor1k = await cpuOf(25, floorOnce(big, 1))
    const floor1 = await cpuOf(25, floorOnce(small, 1))
    const runner1k = await cpuOf(25, runOnce("1000"))
    const runner1 = await cpuOf(25, runOnce("1"))
    row("floor: 1 000 deltas through a bare loop, CPU", floor1k, "ms")
    row("runner: a one-turn run of 1 000 deltas, CPU", runner1k, "ms", floor1k)
    row("runner: a one-turn run of 1 delta, CPU", runner1, "ms")
    row("runner: CPU per 1 000 deltas above the floor", runner1k - runner1 - (floor1k - floor1), "ms")

    const runnerTurns = await cpuOf(15, runOnce("turns"))
    const floorTurns = await cpuOf(15, floorOnce(toolTurn, turns))
    row(`runner: ${turns}-turn run (a tool call each), CPU per turn`, runnerTurns / turns, "ms")
    row("floor: the same parts through a bare loop, CPU per turn", floorTurns / turns, "ms")
    row("runner: CPU per turn above the floor", (runnerTurns - floorTurns) / turns, "ms")
  } finally {
    await runtime.dispose()
  }
}
