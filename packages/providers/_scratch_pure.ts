import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
const arr = Array.from({ length: 40 }, (_, i) => ({ _tag: "TextDelta", text: "x" + i }))
const mk = (pulls: number, async: boolean) => () => {
  let n = 0
  const pull = Effect.suspend(() => n++ >= pulls ? Effect.fail(Option.none()) : async ? Effect.promise(() => Promise.resolve(Chunk.unsafeFromArray(arr))) : Effect.succeed(Chunk.unsafeFromArray(arr)))
  return Effect.runPromise(Stream.runDrain(Stream.repeatEffectChunkOption(pull)))
}
for (const [name, f] of [["sync25", mk(25, false)], ["async25", mk(25, true)], ["async250", mk(250, true)]] as const) {
  for (let i = 0; i < 50; i++) await f()
  const s = process.cpuUsage(); const N = 500
  for (let i = 0; i < N; i++) await f()
  const u = process.cpuUsage(s); console.log(name, ((u.user + u.system) / 1000 / N).toFixed(3), "ms per stream")
}
