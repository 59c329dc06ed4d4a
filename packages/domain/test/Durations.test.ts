import { formatDuration, parseDuration } from "@alisio/domain/Durations"
import { defaultLimits } from "@alisio/domain/Limits"
import { assert, describe, it } from "@effect/vitest"

describe("Durations", () => {
  it("formats durations as people read them, never raw milliseconds past a second", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [0, "0ms"],
      [-5, "0ms"],
      [850, "850ms"],
      [999.6, "1s"],
      [1_000, "1s"],
      [1_500, "1.5s"],
      [9_940, "9.9s"],
      [9_960, "10s"],
      [42_400, "42s"],
      [59_600, "1m"],
      [60_000, "1m"],
      [90_000, "1m30s"],
      [120_000, "2m"],
      [3_599_600, "1h"],
      [3_900_000, "1h5m"],
      [7_200_000, "2h"]
    ]
    for (const [ms, text] of cases) assert.strictEqual(formatDuration(ms), text, `${ms} ms`)
    assert.strictEqual(formatDuration(defaultLimits.firstTokenTimeoutMs), "2m")
  })

  it("parses what it formats, plain milliseconds and combinations", () => {
    for (const ms of [850, 1_500, 42_000, 90_000, 120_000, 3_900_000]) {
      assert.strictEqual(parseDuration(formatDuration(ms)), ms)
    }
    assert.strictEqual(parseDuration("250"), 250)
    assert.strictEqual(parseDuration(" 2M "), 120_000)
    assert.strictEqual(parseDuration("1h 5m"), 3_900_000)
    assert.strictEqual(parseDuration("0.5s"), 500)
  })

  it("refuses what is not a positive duration", () => {
    for (const text of ["", "soon", "5 minutes", "-1s", "0", "0ms", "1x", "m", "1.5.2s"]) {
      assert.isUndefined(parseDuration(text), text)
    }
  })
})
