// The real in-memory store with chosen writes failing or held: each rule fires once, when its
// predicate first matches, so the run meets one failure the way a full disk or a busy file would.

import { StoreError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import type { KnownRunEvent, RunStatus } from "@alisio/domain/RunEvent"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface Faults {
  /** Fails the first append of an event that matches, before it is stored. */
  readonly failEvent?: (event: KnownRunEvent) => boolean
  /** Fails the first session-status write that matches. */
  readonly failStatus?: (id: SessionId, status: RunStatus) => boolean
  /**
   * A disk that fills up and stays full: from the first matching event on, every event, status
   * and run-end write fails with the same `disk_full` error.
   */
  readonly fullFrom?: (event: KnownRunEvent) => boolean
  /** Runs after the first matching event is committed, before the append returns (e.g. a wait). */
  readonly afterCommit?: { readonly match: (event: KnownRunEvent) => boolean; readonly run: Effect.Effect<void> }
  /** Runs after the first matching session is created, before `createSession` returns. */
  readonly afterCreate?: {
    readonly match: (input: SessionStore.NewSession) => boolean
    readonly run: Effect.Effect<void>
  }
}

export const diskFull = new StoreError({
  reason: "disk_full",
  message: "Cannot write /x/alisio.db: the disk is full. Free some disk space and try again."
})

const injected = (what: string) => new StoreError({ reason: "io", message: `injected failure: ${what}` })

/** Fires `rule` once: the first time `test` holds. */
const once = <A extends ReadonlyArray<unknown>>(test: ((...args: A) => boolean) | undefined) => {
  let fired = false
  return (...args: A): boolean => {
    if (fired || test === undefined || !test(...args)) return false
    fired = true
    return true
  }
}

export const layerFailing = (faults: Faults): Layer.Layer<SessionStore.SessionStore> =>
  Layer.effect(
    SessionStore.SessionStore,
    Effect.map(SessionStore.SessionStore, (real) => {
      const failEvent = once(faults.failEvent)
      const failStatus = once(faults.failStatus)
      const afterCommit = once(faults.afterCommit?.match)
      const afterCreate = once(faults.afterCreate?.match)
      let full = false
      const fill = (event: KnownRunEvent) => {
        full ||= faults.fullFrom?.(event) === true
        return full
      }
      return SessionStore.SessionStore.of({
        ...real,
        ...(real.endRun === undefined
          ? {}
          : { endRun: (id, end) => (full ? Effect.fail(diskFull) : real.endRun!(id, end)) }),
        appendEvent: (event) =>
          fill(event)
            ? Effect.fail(diskFull)
            : failEvent(event)
              ? Effect.fail(injected(`storing ${event.type}`))
              : afterCommit(event)
                ? Effect.tap(real.appendEvent(event), () => faults.afterCommit!.run)
                : real.appendEvent(event),
        setSessionStatus: (id, status) =>
          full
            ? Effect.fail(diskFull)
            : failStatus(id, status)
              ? Effect.fail(injected(`setting ${status}`))
              : real.setSessionStatus(id, status),
        createSession: (input) =>
          afterCreate(input)
            ? Effect.tap(real.createSession(input), () => faults.afterCreate!.run)
            : real.createSession(input)
      })
    })
  ).pipe(Layer.provide(SessionStore.layerMemory))
