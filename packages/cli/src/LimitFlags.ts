// The limits a person sets on the command line, as `alisio run` and the interactive UI both take them.
import type { Limits } from "@alisio/domain/Limits"
import * as Option from "effect/Option"

/** The limit flags' values, each `Option.none()` when the flag was not given. */
export interface LimitFlagValues {
  readonly maxTurns: Option.Option<number>
  readonly timeout: Option.Option<number>
  readonly firstTokenTimeout: Option.Option<number>
  readonly firstTokenRetries: Option.Option<number>
  readonly streamIdleTimeout: Option.Option<number>
  readonly maxOutputTokens: Option.Option<number>
  readonly maxContextTokens: Option.Option<number>
  readonly truncationRecoveries: Option.Option<number>
}

/** Only the limits given: the rest come from the configuration, then the defaults. */
export const limitsOf = (flags: LimitFlagValues): Limits => {
  const pick = <K extends keyof Limits>(key: K, value: Option.Option<number>) =>
    Option.isSome(value) ? { [key]: value.value } : {}
  return {
    ...pick("maxTurns", flags.maxTurns),
    ...pick("timeoutMs", flags.timeout),
    ...pick("firstTokenTimeoutMs", flags.firstTokenTimeout),
    ...pick("firstTokenRetries", flags.firstTokenRetries),
    ...pick("streamIdleTimeoutMs", flags.streamIdleTimeout),
    ...pick("maxOutputTokens", flags.maxOutputTokens),
    ...pick("maxContextTokens", flags.maxContextTokens),
    ...pick("truncationRecoveries", flags.truncationRecoveries)
  }
}
