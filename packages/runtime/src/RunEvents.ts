import type { StoreError } from "@alisio/domain/Errors"
import type { RunId, SessionId } from "@alisio/domain/Ids"
import type { ResponsePart } from "@alisio/domain/LanguageModel"
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
  readonly correlationId?: string | undefined
}

/** Emits the events of one run: stamped with `seq`, persisted (unless ephemeral), then published. */
export interface RunEmitter {
  readonly emit: <K extends RunEventType>(type: K, data: RunEventDataMap[K]) => Effect.Effect<RunEventOf<K>, StoreError>
  /**
   * For the event that must reach observers whatever the store does (the terminal event, EV-5):
   * an event the store refused is still published, without an `eventId`, and the failure returned.
   */
  readonly emitFinal: <K extends RunEventType>(
    type: K,
    data: RunEventDataMap[K]
  ) => Effect.Effect<RunEventOf<K>, StoreError>
  /**
   * Streamed text and reasoning as they arrived together (one network read's worth): each delta is
   * its own event, in order, with consecutive `seq`s, as `emit` would make them one by one, but
   * under one lock and one clock read. Deltas are never stored, so this cannot fail.
   */
  readonly emitDeltas: (deltas: ReadonlyArray<StreamDelta>) => Effect.Effect<void>
  /**
   * Publishes an event without storing it, as ephemeral ones are (no `eventId`): decision events
   * when `decisions.telemetry` is off (EV-6).
   */
  readonly emitUnstored: <K extends RunEventType>(type: K, data: RunEventDataMap[K]) => Effect.Effect<RunEventOf<K>>
}

/** One streamed delta for `RunEmitter.emitDeltas`: the provider's part itself, text or reasoning. */
export type StreamDelta = Extract<ResponsePart, { readonly _tag: "TextDelta" | "ReasoningDelta" }>

const deltaType = (delta: StreamDelta) => (delta._tag === "TextDelta" ? "text_delta" : "reasoning_delta")

/** How many events a subscriber may fall behind before publishers wait for it. */
export const defaultCapacity = 1024

/**
 * The run event bus (EV-1…EV-3). A persisted event is committed, and has its `eventId`, before
 * any subscriber sees it; ephemeral ones are published only. Per run, seq order is publish order.
 * Commit and publish are one uninterruptible step: an interruption never leaves a stored event
 * unpublished or its `seq` reused. The bus is bounded: a subscriber that falls `capacity` events
 * behind holds up the publishers (back-pressure) until it reads or closes its scope; nothing is dropped.
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
    /**
     * Calls `listener` with every event of `type` published from now on, of every run, until the
     * scope closes: synchronously, as it is published, so it must be quick and must not throw. Unlike
     * a subscription, events of other types cost it nothing (a run's deltas wake no fiber).
     */
    readonly listen: (
      type: RunEventType,
      listener: (event: KnownRunEvent) => void
    ) => Effect.Effect<void, never, Scope.Scope>
  }
>() {}

export const make = (options: { readonly capacity?: number } = {}) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const bus = yield* PubSub.bounded<KnownRunEvent>(options.capacity ?? defaultCapacity)
    const listeners = new Map<RunEventType, Set<(event: KnownRunEvent) => void>>()
    const listen = (type: RunEventType, listener: (event: KnownRunEvent) => void) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const set = listeners.get(type) ?? new Set()
          listeners.set(type, set)
          // A wrapper per call, so that one listener given twice is called twice and removed once.
          const entry = (event: KnownRunEvent) => listener(event)
          set.add(entry)
          return () => set.delete(entry)
        }),
        (remove) => Effect.sync(remove)
      ).pipe(Effect.asVoid)

    const emitter = (stamp: RunStamp, observe?: (event: KnownRunEvent) => Effect.Effect<void>) =>
      Effect.gen(function* () {
        const serialized = makeMutex({ uninterruptible: true })
        let seq = 0
        const publish = (event: KnownRunEvent) => {
          const listening = listeners.get(event.type)
          const published =
            listening === undefined || listening.size === 0
              ? PubSub.publish(bus, event)
              : Effect.map(PubSub.publish(bus, event), (done) => {
                  for (const listener of listening) listener(event)
                  return done
                })
          return observe === undefined ? published : Effect.zipRight(published, observe(event))
        }
        // Events of the same millisecond share one time string (a stream's deltas mostly do).
        let lastNow = Number.NaN
        let lastTime = ""
        const stamped = <K extends RunEventType>(type: K, data: RunEventDataMap[K], now: number) => {
          if (now !== lastNow) {
            lastNow = now
            lastTime = new Date(now).toISOString()
          }
          const event: { -readonly [P in keyof KnownRunEvent]?: unknown } = {
            schemaVersion: RUN_EVENT_SCHEMA_VERSION,
            type,
            runId: stamp.runId,
            seq: seq + 1,
            sessionId: stamp.sessionId,
            time: lastTime,
            data
          }
          if (stamp.correlationId !== undefined) event.correlationId = stamp.correlationId
          return event
        }
        const unstored = <K extends RunEventType>(known: RunEventOf<K>) => {
          seq += 1
          return Effect.as(publish(known as KnownRunEvent), known)
        }
        // Built without Effect.gen or spreads: this runs once per streamed delta.
        const emit = <K extends RunEventType>(type: K, data: RunEventDataMap[K]) =>
          serialized(
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const event = stamped(type, data, now)
              const known = event as unknown as RunEventOf<K>
              if (isEphemeralType(type)) return unstored(known)
              return Effect.flatMap(store.appendEvent(known as KnownRunEvent), (eventId) => {
                event.eventId = eventId
                seq += 1
                return Effect.as(publish(known as KnownRunEvent), known)
              })
            })
          )
        const emitFinal = <K extends RunEventType>(type: K, data: RunEventDataMap[K]) =>
          serialized(
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const event = stamped(type, data, now)
              const known = event as unknown as RunEventOf<K>
              const stored = isEphemeralType(type)
                ? Effect.void
                : Effect.tap(store.appendEvent(known as KnownRunEvent), (eventId) => {
                    event.eventId = eventId
                  })
              return Effect.flatMap(Effect.either(stored), (result) => {
                seq += 1
                return Effect.zipRight(
                  publish(known as KnownRunEvent),
                  result._tag === "Left" ? Effect.fail(result.left) : Effect.succeed(known)
                )
              })
            })
          )
        const emitDeltas = (deltas: ReadonlyArray<StreamDelta>): Effect.Effect<void> => {
          if (deltas.length === 0) return Effect.void
          if (deltas.length === 1) {
            const delta = deltas[0]!
            // An ephemeral event is never stored, so its emit cannot fail.
            return Effect.asVoid(emit(deltaType(delta), { text: delta.text })) as Effect.Effect<void>
          }
          return serialized(
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const events: Array<KnownRunEvent> = new Array(deltas.length)
              for (let i = 0; i < deltas.length; i++) {
                const delta = deltas[i]!
                events[i] = stamped(deltaType(delta), { text: delta.text }, now) as unknown as KnownRunEvent
                seq += 1
              }
              const published = Effect.map(PubSub.publishAll(bus, events), () => {
                for (const event of events) {
                  const listening = listeners.get(event.type)
                  if (listening !== undefined) for (const listener of listening) listener(event)
                }
              })
              return observe === undefined
                ? published
                : Effect.zipRight(published, Effect.forEach(events, observe, { discard: true }))
            })
          )
        }
        const emitUnstored = <K extends RunEventType>(type: K, data: RunEventDataMap[K]) =>
          serialized(
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              unstored(stamped(type, data, now) as unknown as RunEventOf<K>)
            )
          )
        return { emit, emitFinal, emitDeltas, emitUnstored } satisfies RunEmitter
      })

    return RunEvents.of({ emitter, subscribe: PubSub.subscribe(bus), listen })
  })

export const layer = Layer.effect(RunEvents, make())

/** The bus with another capacity (tests of back-pressure). */
export const layerWith = (options: { readonly capacity: number }) => Layer.effect(RunEvents, make(options))
