import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logging from "../src/Logging.js"

const captured = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const lines = { stdout: "", stderr: "" }
      const out = process.stdout.write.bind(process.stdout)
      const err = process.stderr.write.bind(process.stderr)
      process.stdout.write = ((chunk: string) => {
        lines.stdout += chunk
        return true
      }) as typeof process.stdout.write
      process.stderr.write = ((chunk: string) => {
        lines.stderr += chunk
        return true
      }) as typeof process.stderr.write
      return { lines, out, err }
    }),
    ({ lines }) => Effect.as(effect, lines),
    ({ err, out }) =>
      Effect.sync(() => {
        process.stdout.write = out
        process.stderr.write = err
      })
  )

describe("CLI logging", () => {
  it.effect("EV-1 logs go to stderr as one line each, never to stdout where --json events go", () =>
    Effect.gen(function* () {
      const lines = yield* captured(
        Effect.gen(function* () {
          yield* Effect.logInfo("chatter nobody needs")
          yield* Effect.logWarning("could not store the terminal event", new Error("disk full"))
        }).pipe(Effect.provide(Logging.layer))
      )
      assert.strictEqual(lines.stdout, "")
      assert.strictEqual(lines.stderr, "alisio: warning: could not store the terminal event disk full\n")
    })
  )
})
