import type { KnownRunEvent, RunStatus } from "@alisio/domain/RunEvent"
import { isAlive } from "@alisio/runtime/ProcessOwner"
import { type RunRecord, SessionStore, type StoredEvent, type UnreadableRow } from "@alisio/runtime/SessionStore"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { reportUnreadable } from "./EventPages.js"
import { statusOfEnding } from "./Summary.js"

const FOLLOW_PAGE = 500
const FOLLOW_EVERY = Duration.millis(100)

/**
 * A repeated request: replays what its run stored, then, while the run still goes on in another
 * process, follows its new events from the database on the Effect clock until its terminal event
 * (ST-3). A run whose process died meanwhile is marked interrupted (ST-4). A stored event that
 * cannot be read is left out and said once, on one line, however often a page reads it (ST-1).
 * Returns how the run ended.
 */
export const followRun = (run: RunRecord, requestId: string, quiet: boolean, render: (event: KnownRunEvent) => void) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const say = (line: string) => Effect.sync(() => quiet || process.stderr.write(`alisio: ${line}\n`))
    let status: RunStatus | undefined
    let cursor: string | undefined
    let seen = 0
    const told = new Set<string>()
    const unreadable = (row: UnreadableRow) => {
      if (cursor === undefined || Number(row.id) > Number(cursor)) cursor = row.id
      if (told.has(row.id)) return Effect.void
      told.add(row.id)
      return reportUnreadable(row)
    }
    const show = (events: ReadonlyArray<StoredEvent>) => {
      for (const event of events) {
        if (cursor === undefined || Number(event.eventId) > Number(cursor)) cursor = event.eventId
        if (event.runId !== run.id) continue
        seen += 1
        render(event)
        status = statusOfEnding(event) ?? status
      }
    }
    const stored = yield* store.events(run.sessionId, run.id, { onUnreadable: unreadable })
    const ended = run.status !== "queued" && run.status !== "running"
    yield* say(
      ended
        ? `request ${requestId} already ran as ${run.id}; replaying it`
        : `request ${requestId} is running as ${run.id} (pid ${run.owner.pid}); following it`
    )
    show(stored)
    // The events stored after the cursor (after the `seen` first ones, for a store without pages).
    const newer = () =>
      store.eventsPage === undefined
        ? Effect.map(store.events(run.sessionId, run.id, { onUnreadable: unreadable }), (events) => events.slice(seen))
        : Effect.tap(
            store.eventsPage(run.sessionId, { limit: FOLLOW_PAGE, ...(cursor === undefined ? {} : { cursor }) }),
            (page) => Effect.forEach(page.unreadable ?? [], unreadable, { discard: true })
          ).pipe(Effect.map((page) => page.items))
    while (status === undefined) {
      const events = yield* newer()
      if (events.length > 0) {
        show(events)
        continue
      }
      const now = store.runs === undefined ? undefined : (yield* store.runs(run.sessionId)).find((r) => r.id === run.id)
      if (now === undefined) {
        // A store that cannot say how the run stands: what was stored is all there is to show.
        status = run.status
      } else if (now.status !== "queued" && now.status !== "running") {
        // Ended: its terminal event, stored before the run row ends, is read once more.
        show(yield* newer())
        status ??= now.status
      } else if (!(yield* isAlive(now.owner))) {
        // Said even with --json or -q: it is why the run ends early.
        yield* Effect.sync(() =>
          process.stderr.write(
            `alisio: the process running request ${requestId} (pid ${now.owner.pid}) ended before the run finished\n`
          )
        )
        // Reconciliation stores the run's ending (`run_failed`, code `interrupted`): shown as the last event.
        if (store.interruptRuns !== undefined) {
          yield* store.interruptRuns()
          show(yield* newer())
        }
        status = "interrupted"
      } else {
        yield* Effect.sleep(FOLLOW_EVERY)
      }
    }
    return status
  })
