import { createInterface } from "node:readline"
import type { Session } from "@alisio/runtime/SessionStore"
import * as Effect from "effect/Effect"
import { CliError, ExitCode, usageError } from "./CliError.js"
import { displayTitle, type SessionNode } from "./SessionRecords.js"
import { childTree } from "./SessionShow.js"
import { withStore } from "./SessionsCommand.js"
import { findSession, shortId } from "./ShortIds.js"

/**
 * Asks a yes/no question on the terminal; anything but y or yes is no, and so is Ctrl-D. Ctrl-C
 * (which the terminal hands to the question, not to the process) is `cancelled`.
 */
const confirm = (question: string): Effect.Effect<"yes" | "no" | "cancelled"> =>
  Effect.async<"yes" | "no" | "cancelled">((resume) => {
    const terminal = createInterface({ input: process.stdin, output: process.stderr })
    let answered = false
    let interrupted = false
    terminal.question(question, (answer) => {
      answered = true
      terminal.close()
      resume(Effect.succeed(/^\s*y(es)?\s*$/i.test(answer) ? "yes" : "no"))
    })
    terminal.on("SIGINT", () => {
      interrupted = true
      terminal.close()
    })
    terminal.on("close", () => {
      if (answered) return
      // What comes next starts on a line of its own, not after the question.
      process.stderr.write("\n")
      resume(Effect.succeed(interrupted ? "cancelled" : "no"))
    })
    return Effect.sync(() => terminal.close())
  })

const countNodes = (nodes: ReadonlyArray<SessionNode>): number =>
  nodes.reduce((sum, node) => sum + 1 + countNodes(node.children), 0)

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const named = (session: Session) => {
  const title = displayTitle(session)
  return `${shortId(session.id)}${title === undefined ? "" : ` "${title}"`}`
}

/**
 * `alisio sessions rm <id…>`: deletes sessions with their child sessions, all or none. Asks first
 * on a terminal; elsewhere `--yes` says the deletion is meant. A session with a run in progress
 * is refused.
 */
export const removeSessions = (flags: { readonly yes: boolean; readonly sessionIds: ReadonlyArray<string> }) =>
  withStore((store) =>
    Effect.gen(function* () {
      if (flags.sessionIds.length === 0)
        return yield* usageError("Name the sessions to delete: alisio sessions rm <id…>")
      const found = yield* Effect.forEach(flags.sessionIds, (id) => findSession(store, id))
      const sessions = [...new Map(found.map((session) => [session.id, session])).values()]
      const descendants = countNodes((yield* Effect.forEach(sessions, (s) => childTree(store, s.id))).flat())
      const what = `${sessions.length === 1 ? named(sessions[0]!) : plural(sessions.length, "session")}${
        descendants === 0 ? "" : ` and ${plural(descendants, "child session")}`
      }`
      if (!flags.yes) {
        if (process.stdin.isTTY !== true) {
          return yield* usageError(
            `Deleting ${what} needs confirmation and stdin is not a terminal to ask on; add --yes.`
          )
        }
        if (sessions.length > 1) for (const session of sessions) process.stderr.write(`  ${named(session)}\n`)
        const answer = yield* confirm(`Delete ${what}? This cannot be undone. [y/N] `)
        if (answer === "cancelled")
          return yield* new CliError({ message: "Nothing deleted.", exitCode: ExitCode.cancelled })
        if (answer === "no") {
          process.stderr.write("Nothing deleted.\n")
          return
        }
      }
      const { deleted } = yield* store.deleteSessions(sessions.map((session) => session.id))
      for (const session of sessions) process.stdout.write(`deleted ${named(session)}\n`)
      const others = deleted.length - sessions.length
      if (others > 0) process.stdout.write(`deleted ${plural(others, "child session")} with them\n`)
    })
  )
