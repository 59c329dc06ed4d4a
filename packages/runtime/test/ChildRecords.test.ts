// A child session as its rows tell it, for a child this process no longer holds (CH-4).
import { RunId } from "@alisio/domain/Ids"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { storedStatus } from "../src/internal/childRecords.js"

describe("child records", () => {
  it.effect("CH-4 a child whose session was deleted since is reported cancelled with why, never queued", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore.SessionStore
      const parent = yield* store.createSession({ cwd: "/w", status: "interrupted" })
      const child = yield* store.createSession({ cwd: "/w", parentId: parent.id, status: "interrupted" })
      const handle = { sessionId: child.id, runId: RunId.make("run-gone") }
      assert.strictEqual((yield* storedStatus(store, handle)).status, "interrupted")
      yield* store.deleteSessions([child.id])
      const gone = yield* storedStatus(store, handle)
      assert.deepInclude(gone, { status: "cancelled", error: "Its session was deleted." })
    }).pipe(Effect.provide(SessionStore.layerMemory))
  )
})
