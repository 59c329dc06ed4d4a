// EV-5 at the type level: checked by `pnpm typecheck` (tsconfig.test.json covers this folder),
// not by vitest, which would only repeat what the compiler proves. A disagreement is a type error.
import type { KnownRunEvent, RunEventDataMap, RunEventOf, RunEventType } from "@alisio/domain/RunEvent"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
type Holds<T extends true> = T

type FromMap = { [K in RunEventType]: RunEventOf<K> }[RunEventType]

/** `KnownRunEvent` is exactly the union `RunEventDataMap` describes, type by type. */
export type KnownRunEventMatchesTheMap = Holds<Equals<KnownRunEvent, FromMap>>
export type EveryTypeIsMapped = Holds<Equals<KnownRunEvent["type"], keyof RunEventDataMap>>
export type DataIsTheMappedPayload = Holds<
  Equals<Extract<KnownRunEvent, { type: "turn_completed" }>["data"], RunEventDataMap["turn_completed"]>
>
