// Moving between sessions: /new (and /clear), /sessions, /resume.

import type { CommandOutput } from "@alisio/domain/Command"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { childSessionRefusal, resumedElsewhere } from "../../../SessionFolder.js"
import { SessionStore } from "../../../SessionStore.js"
import type { CoreCommand } from "../entry.js"
import { age, columns, describeSession, findSession, shortId, storeFailure, text, usage } from "./shared.js"

const fresh: CoreCommand["run"] = () =>
  Effect.succeed<CommandOutput>({ _tag: "Switch", text: "A new session starts with the next prompt." })

export const newSession: CoreCommand = {
  name: "new",
  description: "Start a new session; the current one stays stored",
  run: fresh
}

export const clear: CoreCommand = {
  name: "clear",
  description: "Start a new session with an empty conversation (as /new)",
  run: fresh
}

const LISTED = 20

export const sessions: CoreCommand = {
  name: "sessions",
  description: "List the sessions of this workspace, newest first",
  run: (invocation) =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const now = yield* Clock.currentTimeMillis
      const found = yield* Effect.mapError(
        store.sessionSummaries({ cwd: invocation.cwd, parentId: null, limit: LISTED }),
        storeFailure(invocation.name)
      )
      if (found.length === 0) return text(`No sessions in ${invocation.cwd} yet.`)
      const rows = found.map((session) => [
        session.id === invocation.sessionId ? "*" : " ",
        shortId(session.id),
        age(now, session.updatedAt),
        `${session.runCount} run${session.runCount === 1 ? "" : "s"}`,
        session.title ?? session.firstPrompt ?? "(untitled)"
      ])
      return text([`Sessions in ${invocation.cwd}:`, ...columns(rows)].join("\n"))
    })
}

export const resume: CoreCommand = {
  name: "resume",
  description: "Go on with an earlier session, named by its id or the start of it",
  argumentHint: "<session-id>",
  run: (invocation) =>
    Effect.gen(function* () {
      if (invocation.args === "") {
        return yield* Effect.fail(
          usage(invocation.name, "Give the session to resume: /resume <id> (/sessions lists them).")
        )
      }
      const [id, ...rest] = invocation.args.split(/\s+/)
      if (rest.length > 0) {
        return yield* Effect.fail(
          usage(invocation.name, `/resume takes one session id, not ${JSON.stringify(invocation.args)}: /resume <id>.`)
        )
      }
      const session = yield* findSession(invocation.name, id!)
      const store = yield* SessionStore
      const child = yield* Effect.mapError(childSessionRefusal(store, session, "alisio"), storeFailure(invocation.name))
      if (child !== undefined) return yield* Effect.fail(usage(invocation.name, child))
      const elsewhere = resumedElsewhere(session, invocation.cwd, "alisio")
      if (elsewhere !== undefined) return yield* Effect.fail(usage(invocation.name, elsewhere))
      return { _tag: "Switch", sessionId: session.id, text: `Resumed session ${describeSession(session)}.` }
    })
}
