import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
const arr = Array.from({ length: 40 }, (_, i) => ({ _tag: "TextDelta", text: "x" + i }))
const base = (pulls: number) => { let n = 0; return Stream.repeatEffectChunkOption(Effect.suspend(() => n++ >= pulls ? Effect.fail(Option.none()) : Effect.promise(() => Promise.resolve(Chunk.unsafeFromArray(arr))))) }
const variants: Record<string, () => Stream.Stream<any, any>> = {
  plain: () => base(25),
  unwrapScoped: () => Stream.unwrapScoped(Effect.as(Effect.acquireRelease(Effect.sync(() => new AbortController()), (c) => Effect.sync(() => c.abort())), base(25))),
  full: () => Stream.suspend(() => Stream.catchAll(Stream.unwrapScoped(Effect.as(Effect.acquireRelease(Effect.sync(() => new AbortController()), (c) => Effect.sync(() => c.abort())), base(25))), (e) => Stream.fail(e)))
}
for (const [name, v] of Object.entries(variants)) {
  const f = () => Effect.runPromise(Stream.runDrain(v()))
  for (let i = 0; i < 100; i++) await f()
  const s = process.cpuUsage(); const N = 1000
  for (let i = 0; i < N; i++) await f()
  const u = process.cpuUsage(s); console.log(name, ((u.user + u.system) / 1000 / N).toFixed(3), "ms per stream")
}
