import type { SessionNotFoundError, StoreError } from "@alisio/domain/Errors"
import { SessionId } from "@alisio/domain/Ids"
import { textOf } from "@alisio/domain/Message"
import { type Session, SessionStore } from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import { loadSetup, type Setup, storeLayer } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import { writeJsonLine } from "./Render.js"

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())

const sessionJson = (session: Session) => ({
  id: session.id,
  ...(session.parentId === undefined ? {} : { parentId: session.parentId }),
  ...(session.title === undefined ? {} : { title: session.title }),
  cwd: session.cwd,
  status: session.status,
  pinned: session.pinned,
  archived: session.archived,
  createdAt: iso(session.createdAt),
  updatedAt: iso(session.updatedAt)
})

const withStore = (
  body: (store: SessionStore["Type"], setup: Setup) => Effect.Effect<void, SessionNotFoundError | StoreError>
) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    // Runs left behind by a dead process read as interrupted here too (ST-4).
    const reconciled = (store: SessionStore["Type"]) =>
      store.interruptRuns === undefined ? Effect.void : store.interruptRuns()
    yield* Effect.flatMap(SessionStore, (store) => Effect.zipRight(reconciled(store), body(store, setup))).pipe(
      Effect.provide(storeLayer(setup)),
      Effect.catchTags({
        SessionNotFoundError: (error) =>
          Effect.fail(usageError(`No session ${error.sessionId}. \`alisio sessions list --all\` shows every session.`)),
        StoreError: (error) => Effect.fail(new CliError({ message: error.message, exitCode: ExitCode.failed }))
      })
    )
  })

/** `alisio sessions list`: root sessions of this directory (or all), newest first. */
export const listSessions = (flags: { readonly json: boolean; readonly all: boolean }) =>
  withStore((store, setup) =>
    Effect.gen(function* () {
      const sessions = yield* store.sessions({ parentId: null, limit: 200, ...(flags.all ? {} : { cwd: setup.cwd }) })
      if (flags.json) {
        for (const session of sessions) process.stdout.write(`${JSON.stringify(sessionJson(session))}\n`)
        return
      }
      if (sessions.length === 0) {
        process.stderr.write(
          flags.all ? "No sessions yet.\n" : "No sessions in this directory (--all lists every one).\n"
        )
        return
      }
      for (const session of sessions) {
        // The first message only, not the whole conversation, when the store can page.
        const opening =
          store.messagesPage === undefined
            ? yield* store.messages(session.id)
            : (yield* store.messagesPage(session.id, { limit: 1 })).items
        const first = opening.find((m) => m.message.role === "user")
        const title =
          session.title ??
          (first?.message.role === "user" ? textOf(first.message.content).replace(/\s+/g, " ").slice(0, 60) : "")
        process.stdout.write(
          `${session.id}  ${iso(session.updatedAt)?.slice(0, 19).replace("T", " ")}  ${session.status.padEnd(14)} ${title}${
            flags.all ? `  (${session.cwd})` : ""
          }\n`
        )
      }
    })
  )

/** `alisio sessions show <id>`: the session, its runs and its messages. */
export const showSession = (flags: { readonly json: boolean; readonly sessionId: string }) =>
  withStore((store) =>
    Effect.gen(function* () {
      const session = yield* store.session(SessionId.make(flags.sessionId))
      const runs = store.runs === undefined ? [] : yield* store.runs(session.id)
      const messages = yield* store.messages(session.id)
      const children = yield* store.sessions({ parentId: session.id })
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({
            ...sessionJson(session),
            runs: runs.map((run) => ({
              id: run.id,
              status: run.status,
              provider: run.provider,
              model: run.model,
              ...(run.requestId === undefined ? {} : { requestId: run.requestId }),
              ...(run.usage === undefined ? {} : { usage: run.usage }),
              ...(run.error === undefined ? {} : { error: run.error }),
              createdAt: iso(run.createdAt),
              endedAt: iso(run.endedAt)
            })),
            children: children.map((child) => ({ id: child.id, status: child.status, title: child.title })),
            messages: messages.length
          })}\n`
        )
        return
      }
      const lines = [
        `session ${session.id}  ${session.status}`,
        `  directory ${session.cwd}`,
        `  updated   ${iso(session.updatedAt)}`,
        ...(session.parentId === undefined ? [] : [`  parent    ${session.parentId}`]),
        "runs:",
        ...runs.map(
          (run) =>
            `  ${run.id}  ${run.status.padEnd(14)} ${run.provider}/${run.model}${run.error === undefined ? "" : `  ${run.error}`}`
        ),
        ...(children.length === 0
          ? []
          : ["children:", ...children.map((c) => `  ${c.id}  ${c.status}  ${c.title ?? ""}`)]),
        "messages:",
        ...messages.map(({ message }) => {
          const text =
            message.role === "system"
              ? message.content
              : message.role === "assistant" && textOf(message.content) === ""
                ? message.content
                    .filter((p) => p._tag === "tool_call")
                    .map((p) => (p._tag === "tool_call" ? `→ ${p.name}` : ""))
                    .join(" ")
                : textOf(message.content)
          return `  ${message.role.padEnd(9)} ${text.replace(/\s+/g, " ").slice(0, 100)}`
        })
      ]
      process.stdout.write(`${lines.join("\n")}\n`)
    })
  )

/** `alisio sessions events <id>`: the stored events, as JSONL with --json. */
export const sessionEvents = (flags: { readonly json: boolean; readonly sessionId: string }) =>
  withStore((store) =>
    Effect.gen(function* () {
      const session = yield* store.session(SessionId.make(flags.sessionId))
      const events = yield* store.events(session.id)
      for (const event of events) {
        if (flags.json) writeJsonLine(event)
        else
          process.stdout.write(`${event.eventId.padStart(6)} ${event.time} ${event.runId.slice(0, 8)} ${event.type}\n`)
      }
    })
  )
