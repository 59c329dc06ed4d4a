import { assert, describe, it } from "@effect/vitest"
import { localTime, relativeTime } from "../src/RelativeTime.js"

// Local times: the strings follow the calendar of the machine's time zone, whatever it is.
const at = (year: number, month: number, day: number, hour = 12, minute = 0) =>
  new Date(year, month - 1, day, hour, minute).getTime()

describe("RelativeTime", () => {
  it("CLI-1 recent times read as people say them, in the local calendar", () => {
    const now = at(2026, 3, 10, 15, 30)
    assert.strictEqual(relativeTime(now - 10_000, now), "just now")
    assert.strictEqual(relativeTime(now + 60_000, now), "just now", "a clock a little ahead is not the future")
    assert.strictEqual(relativeTime(now - 3 * 60_000, now), "3 min ago")
    assert.strictEqual(relativeTime(at(2026, 3, 10, 9, 0), now), "6 h ago")
    assert.strictEqual(relativeTime(at(2026, 3, 9, 23, 50), now), "yesterday")
    assert.strictEqual(relativeTime(at(2026, 3, 9, 23, 50), at(2026, 3, 10, 0, 20)), "30 min ago")
    assert.strictEqual(relativeTime(at(2026, 3, 9, 1, 0), at(2026, 3, 10, 0, 50)), "yesterday")
    assert.strictEqual(relativeTime(at(2026, 3, 6), now), "4 days ago")
    assert.strictEqual(relativeTime(at(2026, 1, 3), now), "Jan 3")
    assert.strictEqual(relativeTime(at(2025, 12, 31), now), "2025-12-31")
  })

  it("CLI-1 a local time to the minute", () => {
    assert.strictEqual(localTime(at(2026, 3, 5, 9, 7)), "2026-03-05 09:07")
  })
})
