// What a process killed with SIGKILL leaves: runs, sessions and tool calls marked interrupted (ST-4),
// and a database that still passes integrity_check.

import { join } from "node:path"
import { RunId, SessionId } from "@alisio/domain/Ids"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { currentOwner } from "../src/ProcessOwner.js"
import * as SessionStore from "../src/SessionStore.js"
import { spawnStoreChild, tempDir } from "./fixtures/storeTesting.js"
import { callId, rawQuery } from "./helpers/sessionStore.js"

describe("SessionStore", () => {
  it.scoped("ST-4 interruptRuns marks interrupted the runs and child sessions of a process killed with SIGKILL", () =>
    Effect.gen(function* () {
      const filename = join(yield* tempDir, "alisio.db")
      const store = yield* SessionStore.make({ filename })
      const root = yield* store.createSession({ cwd: "/w", status: "running" })
      const mine = yield* store.beginRun!({
        id: RunId.make("parent-run"),
        sessionId: root.id,
        model: "m",
        provider: "p",
        owner: currentOwner
      })

      const child = yield* spawnStoreChild("runs", filename, root.id)
      const taken = (yield* child.nextLine) as { runs: Array<RunId>; child: SessionId }
      // While the child lives, nothing of it is touched.
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })

      yield* child.kill9
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 2, sessions: 1 })
      const runs = yield* store.runs!(taken.child)
      assert.deepStrictEqual(
        runs.map((r) => r.id),
        taken.runs
      )
      for (const run of runs) {
        assert.strictEqual(run.status, "interrupted")
        assert.strictEqual(run.owner.pid, child.pid)
        assert.include(run.error ?? "", `pid ${child.pid}`)
        assert.isDefined(run.endedAt)
      }
      assert.strictEqual((yield* store.session(taken.child)).status, "interrupted")
      // This process's run and the root session are alive and left alone.
      assert.strictEqual(
        Option.getOrThrow(yield* Effect.map(store.runs!(root.id), (rs) => Option.fromNullable(rs[0]))).status,
        "running"
      )
      assert.strictEqual(mine.run.status, "running")
      assert.strictEqual((yield* store.session(root.id)).status, "running")
      assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
    })
  )

  it.scoped(
    "ST-4 interruptRuns also ends the tool calls a killed process left running and the root sessions it left queued",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const store = yield* SessionStore.make({ filename })
        // This process's own queued session and running call are alive and must stay as they are.
        const mine = yield* store.createSession({ cwd: "/w" })
        const myRun = RunId.make("my-run")
        yield* store.beginRun!({ id: myRun, sessionId: mine.id, model: "m", provider: "p", owner: currentOwner })
        yield* store.toolCallStarted({ id: callId, sessionId: mine.id, runId: myRun, name: "read", arguments: "{}" })
        const waiting = yield* store.createSession({ cwd: "/w" })

        const child = yield* spawnStoreChild("leftovers", filename, "unused")
        const left = (yield* child.nextLine) as { queued: SessionId; running: SessionId; run: RunId }
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
        assert.strictEqual((yield* store.toolCalls(left.running))[0]?.status, "running")

        yield* TestClock.adjust(5000)
        yield* child.kill9
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 1, sessions: 2 })
        const [call] = yield* store.toolCalls(left.running)
        assert.strictEqual(call?.status, "cancelled")
        assert.strictEqual(call?.endedAt, 5000)
        assert.include(call?.result ?? "", "ended before it finished")
        assert.strictEqual((yield* store.session(left.queued)).status, "interrupted")
        assert.strictEqual((yield* store.session(left.running)).status, "interrupted")

        assert.strictEqual((yield* store.toolCalls(mine.id))[0]?.status, "running")
        assert.strictEqual((yield* store.session(mine.id)).status, "queued")
        assert.strictEqual((yield* store.session(waiting.id)).status, "queued")
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
      })
  )

  it.scoped(
    "ST-4/EV-3 an interrupted run's stored events end as the runner would have ended them: open calls and approvals closed, then run_failed (interrupted)",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const store = yield* SessionStore.make({ filename })
        const child = yield* spawnStoreChild("leftovers", filename, "unused")
        const left = (yield* child.nextLine) as { running: SessionId; run: RunId; pid: number }
        yield* child.kill9
        yield* TestClock.adjust(7000)
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 1, sessions: 2 })

        const events = yield* store.events(left.running)
        assert.deepStrictEqual(
          events.map((e) => [e.seq, e.type]),
          [
            [1, "run_started"],
            [2, "tool_call_started"],
            [3, "approval_requested"],
            [4, "approval_resolved"],
            [5, "tool_call_completed"],
            [6, "run_failed"]
          ]
        )
        for (const event of events) {
          assert.strictEqual(event.runId, left.run)
          assert.strictEqual(event.correlationId, "req-7")
        }
        const [resolved, completed, failed] = events.slice(3)
        assert.deepStrictEqual(resolved?.type === "approval_resolved" && resolved.data, {
          approvalId: "ap-1",
          approved: false,
          by: "policy",
          cancelled: true
        })
        assert.isTrue(completed?.type === "tool_call_completed")
        if (completed?.type === "tool_call_completed") {
          assert.strictEqual(completed.data.toolCallId, "call-left")
          assert.strictEqual(completed.data.status, "cancelled")
          assert.strictEqual(completed.data.result, (yield* store.toolCalls(left.running))[0]?.result)
        }
        assert.deepStrictEqual(failed?.type === "run_failed" && failed.data, {
          code: "interrupted",
          error: `The process running it (pid ${left.pid}) ended before the run finished.`
        })
        assert.strictEqual(failed?.time, new Date(7000).toISOString())
        // Once: a later start adds nothing.
        assert.deepStrictEqual(yield* store.interruptRuns!(), { runs: 0, sessions: 0 })
        assert.strictEqual((yield* store.events(left.running)).length, 6)
      })
  )

  it.scoped(
    "ST-1 a kill -9 during a burst of writes leaves a database that passes integrity_check and opens at the current version",
    () =>
      Effect.gen(function* () {
        const filename = join(yield* tempDir, "alisio.db")
        const session = yield* Effect.scoped(
          Effect.flatMap(SessionStore.make({ filename }), (store) =>
            store.createSession({ cwd: "/w", id: SessionId.make("burst") })
          )
        )
        const child = yield* spawnStoreChild("burst", filename, session.id)
        let reported = 0
        while (reported < 40) reported = ((yield* child.nextLine) as { batches: number }).batches
        yield* child.kill9

        assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA integrity_check"), [{ integrity_check: "ok" }])
        const store = yield* SessionStore.make({ filename })
        assert.deepStrictEqual(yield* rawQuery(filename, "PRAGMA user_version"), [{ user_version: 6 }])
        const messages = yield* store.messages(session.id)
        const events = yield* store.events(session.id)
        // Each batch of three messages is one transaction: all of it or none of it.
        assert.strictEqual(messages.length % 3, 0)
        const batches = messages.length / 3
        assert.isAtLeast(batches, reported)
        assert.deepStrictEqual(
          messages.map((m) => m.position),
          Array.from({ length: messages.length }, (_, i) => i + 1)
        )
        assert.include([batches, batches - 1], events.length)
      })
  )
})
