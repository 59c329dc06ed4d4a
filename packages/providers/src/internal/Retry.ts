import { formatDuration } from "@alisio/domain/Durations"
import { ProviderError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import type { Failure } from "./ErrorMapping.js"

export interface RetryPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** A `Retry-After` longer than this is not waited for: the error goes to the caller at once. */
  readonly maxRetryAfterMs: number
}

const DAY = 86_400_000

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000
}

/**
 * How long to wait before retry number `retry` (1-based), or none when the failure must go to the
 * caller. The server's `Retry-After` wins; otherwise capped exponential backoff with ±25% jitter.
 */
export const retryDelay = (
  policy: RetryPolicy,
  failure: Failure,
  retry: number
): Effect.Effect<Option.Option<number>> => {
  if (!failure.retryable || retry > policy.maxRetries) return Effect.succeed(Option.none())
  const asked = failure.error.retryAfterMs
  if (asked !== undefined) {
    return Effect.succeed(asked > policy.maxRetryAfterMs ? Option.none() : Option.some(asked))
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return Effect.map(Random.nextRange(0.75, 1.25), (jitter) => Option.some(Math.round(backoff * jitter)))
}

/**
 * The error a failure that is not retried ends with: one whose `Retry-After` was too long to wait
 * for says how long the server asked for, so the person knows when to try again.
 */
export const finalError = (policy: RetryPolicy, failure: Failure): ProviderError => {
  const { error } = failure
  const asked = error.retryAfterMs
  if (!failure.retryable || asked === undefined || asked <= policy.maxRetryAfterMs) return error
  // A server asking for years (a garbled header) is not quoted to the hour.
  const wait = asked >= DAY ? "more than a day" : formatDuration(asked)
  const message = `${error.message.replace(/\.$/, "")}; the server asks to wait ${wait} before the next request.`
  return new ProviderError({
    code: error.code,
    message,
    retryAfterMs: asked,
    ...(error.provider === undefined ? {} : { provider: error.provider }),
    ...(error.status === undefined ? {} : { status: error.status })
  })
}
