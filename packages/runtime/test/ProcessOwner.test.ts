import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { currentOwner, isAlive } from "../src/ProcessOwner.js"

describe("ProcessOwner", () => {
  it.effect("ST-4 this process is its own live owner, named by pid, boot and start time", () =>
    Effect.gen(function* () {
      assert.strictEqual(currentOwner.pid, process.pid)
      const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
      assert.match(currentOwner.token, new RegExp(`^linux:${bootId}:[0-9]+$`))
      assert.isTrue(yield* isAlive(currentOwner))
    })
  )

  it.effect("ST-4 a live pid with another start time is a reused pid, not the owner", () =>
    Effect.gen(function* () {
      const [, bootId, ticks] = currentOwner.token.split(":")
      assert.isFalse(yield* isAlive({ ...currentOwner, token: `linux:${bootId}:${Number(ticks) + 1}` }))
      assert.isFalse(yield* isAlive({ ...currentOwner, token: `linux:another-boot:${ticks}` }))
      assert.isFalse(yield* isAlive({ pid: 0, token: currentOwner.token }))
    })
  )

  it.effect("ST-4 an owner under another host name on this boot cannot be checked and counts as alive", () =>
    Effect.gen(function* () {
      const [, bootId] = currentOwner.token.split(":")
      const elsewhere = { pid: 999_999_999, host: `not-${currentOwner.host}` }
      assert.isTrue(yield* isAlive({ ...elsewhere, token: `linux:${bootId}:1` }))
      // From before this boot it cannot be running, whatever its host.
      assert.isFalse(yield* isAlive({ ...elsewhere, token: "linux:another-boot:1" }))
    })
  )
})
