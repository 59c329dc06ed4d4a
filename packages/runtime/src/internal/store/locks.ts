// The session lock (ST-1, issue 10 item 2): one run per session at a time, across processes
// (a `session_locks` row naming the live holder) and inside this process (a registry of the
// sessions held here, checked and claimed before any await, so two fibers cannot both pass).

import { resolve } from "node:path"
import { SessionLockedError } from "@alisio/domain/Errors"
import type { SessionId } from "@alisio/domain/Ids"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { isAliveSync, type ProcessOwner } from "../../ProcessOwner.js"
import type { SessionStoreService } from "../../SessionStore.js"
import { MEMORY } from "../sessionDatabase.js"
import * as Rows from "../sessionRows.js"
import { onFirstCall, ownerOf, type Sql } from "./sql.js"

/** Sessions locked by this process, by database and session id; shared by every store instance. */
const heldHere = new Set<string>()
let memoryDatabases = 0

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    holder: () =>
      reading(
        "A session lock",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Rows.LockRow,
          execute: (id) => run("SELECT pid, token, host FROM session_locks WHERE session_id = ?", [id])
        })
      ),
    sessionExists: () => (id: string) =>
      Effect.map(run("SELECT 1 FROM sessions WHERE id = ?", [id]), (rows) => rows.length > 0),
    /** Takes the lock, replacing whatever row was there: the caller checked that its holder is gone. */
    take: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ session_id: Schema.String, ...Rows.LockRow.fields, now: Schema.Number }),
          execute: (r) =>
            run(
              `INSERT INTO session_locks (session_id, pid, token, host, acquired_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (session_id) DO UPDATE SET
            pid = excluded.pid, token = excluded.token, host = excluded.host, acquired_at = excluded.acquired_at`,
              [r.session_id, r.pid, r.token, r.host, r.now]
            )
        })
      ),
    release: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ session_id: Schema.String, pid: Schema.Int, token: Schema.String }),
          execute: (r) =>
            run("DELETE FROM session_locks WHERE session_id = ? AND pid = ? AND token = ?", [
              r.session_id,
              r.pid,
              r.token
            ])
        })
      )
  })

const sameOwner = (a: ProcessOwner, b: ProcessOwner) => a.pid === b.pid && a.token === b.token

export const makeLocks = (sql: Sql) => {
  const { db, notFound } = sql
  const q = queries(sql)
  // Each in-memory database is its own; files are one database whatever the spelling of their path.
  const database = db.filename === MEMORY ? `${MEMORY}#${++memoryDatabases}` : resolve(db.filename)

  const lockedHere = (id: SessionId) =>
    new SessionLockedError({
      sessionId: id,
      holderPid: process.pid,
      message: `Session ${id} already has a run in this process (pid ${process.pid}). Wait for that run to end, or cancel it, then try again.`
    })

  const lockedElsewhere = (id: SessionId, { host, pid }: ProcessOwner) =>
    new SessionLockedError({
      sessionId: id,
      holderPid: pid,
      ...(host === undefined ? {} : { holderHost: host }),
      message: `Session ${id} is in use by another Alisio process (pid ${pid}${
        host === undefined ? "" : ` on ${host}`
      }). Wait for it to finish or stop that process, then try again.`
    })

  const acquire = (id: SessionId, owner: ProcessOwner) =>
    db.transaction(
      Effect.gen(function* () {
        const holder = yield* Effect.map(q.holder(id), Option.map(ownerOf))
        // A lock left by a dead process, or by this one (a release that failed), is taken over.
        if (Option.isSome(holder) && !sameOwner(holder.value, owner) && isAliveSync(holder.value)) {
          return yield* lockedElsewhere(id, holder.value)
        }
        if (!(yield* q.sessionExists(id))) return yield* notFound(`Session ${id}`)
        const now = yield* Clock.currentTimeMillis
        yield* q.take({ session_id: id, pid: owner.pid, token: owner.token, host: owner.host ?? null, now })
      })
    )

  const release = (id: SessionId, owner: ProcessOwner) =>
    db.use(q.release({ session_id: id, pid: owner.pid, token: owner.token })).pipe(
      // Nothing for the user to do: the lock names this process, and the next run takes over the
      // lock of a process that is gone. The cause (a full disk, say) was reported where it hit.
      Effect.catchAll((error) => Effect.logDebug(`Could not release the lock of session ${id}: ${error.message}`))
    )

  const lockSession: SessionStoreService["lockSession"] = (id, owner) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const key = `${database}\u0000${id}`
        if (heldHere.has(key)) return yield* lockedHere(id)
        heldHere.add(key)
        const free = Effect.sync(() => heldHere.delete(key))
        // Waiting for a busy database stays interruptible; an interruption may land after the row
        // was written, so a failed acquisition also deletes the row if it is ours.
        const acquired = yield* Effect.exit(restore(acquire(id, owner)))
        if (Exit.isFailure(acquired)) {
          if (Exit.isInterrupted(acquired)) yield* release(id, owner)
          yield* free
          return yield* acquired
        }
        yield* Effect.addFinalizer(() => Effect.zipRight(release(id, owner), free))
      })
    )

  return { lockSession }
}
