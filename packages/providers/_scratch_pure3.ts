import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
const arr = Array.from({ length: 70 }, (_, i) => ({ _tag: "TextDelta", text: "x" + i }))
const base = (pulls: number) => Stream.suspend(() => { let n = 0; return Stream.repeatEffectChunkOption(Effect.suspend(() => n++ >= pulls ? Effect.fail(Option.none()) : Effect.promise(() => new Promise<Chunk.Chunk<any>>((r) => setImmediate(() => r(Chunk.unsafeFromArray(arr))))))) })
const layered = (pulls: number) => Stream.suspend(() => Stream.catchAll(Stream.unwrapScoped(Effect.as(Effect.acquireRelease(Effect.sync(() => new AbortController()), (c) => Effect.sync(() => c.abort())), base(pulls))), (e) => Stream.fail(e)))
const scopedOnly = (pulls: number) => Stream.unwrapScoped(Effect.as(Effect.acquireRelease(Effect.sync(() => new AbortController()), (c) => Effect.sync(() => c.abort())), base(pulls)))
const raw = async (pulls: number) => { for (let i = 0; i < pulls; i++) await new Promise((r) => setImmediate(() => r(arr))) }
const N = 1000
await Effect.runPromise(Effect.gen(function*() {
  for (const [name, s] of [["plain1", base(1)], ["plain15", base(15)], ["layered15", layered(15)], ["scoped15", scopedOnly(15)], ["plain15b", base(15)], ["layered15b", layered(15)], ["scoped15b", scopedOnly(15)]] as const) {
    const eff = Stream.runForEachChunk(s, () => Effect.void)
    for (let i = 0; i < 100; i++) yield* eff
    const st = process.cpuUsage(); for (let i = 0; i < N; i++) yield* eff; const u = process.cpuUsage(st)
    console.log(name, ((u.user + u.system) / 1000 / N).toFixed(3), "ms")
  }
  const st = process.cpuUsage(); for (let i = 0; i < N; i++) yield* Effect.promise(() => raw(15)); const u = process.cpuUsage(st)
  console.log("raw15", ((u.user + u.system) / 1000 / N).toFixed(3), "ms")
}))
