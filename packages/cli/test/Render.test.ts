import { assert, describe, it } from "@effect/vitest"
import { retryLine } from "../src/Render.js"

describe("Render", () => {
  it("EV-1 each retry is one line saying why, the wait as people read it, and the attempt", () => {
    assert.strictEqual(
      retryLine({ attempt: 1, of: 1, reason: "first_token_timeout", afterMs: 120_000 }),
      "↻ no response within 2m; sending the request again (1/1)"
    )
    assert.strictEqual(
      retryLine({ attempt: 1, of: 2, reason: "rate_limited", status: 429, afterMs: 1_500 }),
      "↻ rate limited (HTTP 429); retrying in 1.5s (1/2)"
    )
    assert.strictEqual(
      retryLine({ attempt: 2, of: 2, reason: "server_error", status: 503, afterMs: 850 }),
      "↻ server error (HTTP 503); retrying in 850ms (2/2)"
    )
    assert.strictEqual(
      retryLine({ attempt: 1, of: 2, reason: "network", afterMs: 30_000 }),
      "↻ network error; retrying in 30s (1/2)"
    )
  })
})
