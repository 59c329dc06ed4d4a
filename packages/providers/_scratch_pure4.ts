import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
const N = 1000
const measure = (name: string, eff: Effect.Effect<any, any>) => Effect.gen(function*() {
  for (let i = 0; i < 100; i++) yield* eff
  const w = performance.now(); const st = process.cpuUsage(); for (let i = 0; i < N; i++) yield* eff; const u = process.cpuUsage(st)
  console.log(name.padEnd(16), ((u.user + u.system) / 1000 / N).toFixed(3), "ms cpu", ((performance.now() - w) / N).toFixed(3), "ms wall")
})
const imm = () => new Promise<void>((r) => setImmediate(r))
await Effect.runPromise(Effect.gen(function*() {
  yield* measure("promise", Effect.promise(imm))
  yield* measure("sync stream", Stream.runDrain(Stream.make(1, 2, 3)))
  yield* measure("fromEffect async", Stream.runDrain(Stream.fromEffect(Effect.promise(imm))))
  yield* measure("scoped sync", Effect.scoped(Effect.addFinalizer(() => Effect.void)))
}))
