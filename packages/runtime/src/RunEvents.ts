import type { StoreError } from "@alisio/domain/Errors"
import type { RunId, SessionId } from "@alisio/domain/Ids"
import {
  isEphemeralType,
  type KnownRunEvent,
  RUN_EVENT_SCHEMA_VERSION,
  type RunEventDataMap,
  type RunEventOf,
  type RunEventType
} from "@alisio/domain/RunEvent"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { makeMutex } from "./internal/mutex.js"
import { SessionStore } from "./SessionStore.js"

/** The identity every event of one run carries (EV-2). */
export interface RunStamp {
  readonly runId: RunId
  readonly sessionId: SessionId
  readonly correlationId?: string
}

/** Emits the events of one run: stamped with `seq`, persisted (unless ephemeral), then published. */
export interface RunEmitter {
  readonly emit: <K extends RunEventType>(type: K, data: RunEventDataMap[K]) => Effect.Effect<RunEventOf<K>, StoreError>
}

/**
 * The run event bus (EV-1…EV-3). A persisted event is committed, and has its `eventId`, before
 * any subscriber sees it; ephemeral ones are published only. Per run, seq order is publish order.
 */
export class RunEvents extends Context.Tag("@alisio/runtime/RunEvents")<
  RunEvents,
  {
    readonly emitter: (
      stamp: RunStamp,
      observe?: (event: KnownRunEvent) => Effect.Effect<void>
    ) => Effect.Effect<RunEmitter>
    /** Every event published from now on, of every run, until the scope closes. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<KnownRunEvent>, never, Scope.Scope>
  }
>() {}

export const make = Effect.gen(function* () {
  const store = yield* SessionStore
  const bus = yield* PubSub.unbounded<KnownRunEvent>()

  const emitter = (stamp: RunStamp, observe?: (event: KnownRunEvent) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      const serialized = makeMutex()
      let seq = 0
      const publish = (event: KnownRunEvent) => {
        seq = event.seq
        const published = PubSub.publish(bus, event)
        return observe === undefined ? published : Effect.zipRight(published, observe(event))
      }
      // Built without Effect.gen or spreads: this runs once per streamed delta.
      const emit = <K extends RunEventType>(type: K, data: RunEventDataMap[K]) =>
        serialized(
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const event: { -readonly [P in keyof KnownRunEvent]?: unknown } = {
              schemaVersion: RUN_EVENT_SCHEMA_VERSION,
              type,
              runId: stamp.runId,
              seq: seq + 1,
              sessionId: stamp.sessionId,
              time: new Date(now).toISOString(),
              data
            }
            if (stamp.correlationId !== undefined) event.correlationId = stamp.correlationId
            const known = event as unknown as RunEventOf<K>
            if (isEphemeralType(type)) return Effect.as(publish(known as KnownRunEvent), known)
            return Effect.flatMap(store.appendEvent(known as KnownRunEvent), (eventId) => {
              event.eventId = eventId
              return Effect.as(publish(known as KnownRunEvent), known)
            })
          })
        )
      return { emit } satisfies RunEmitter
    })

  return RunEvents.of({ emitter, subscribe: PubSub.subscribe(bus) })
})

export const layer = Layer.effect(RunEvents, make)
