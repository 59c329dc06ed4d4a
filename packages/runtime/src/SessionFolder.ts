// A session works in one folder: its files, its project's configuration and instructions are
// there. Resuming it from another folder is a choice made with `--cwd`, never an accident. A
// subagent's child session is not resumed by a person at all: it runs only as its parent's task.

import * as fs from "node:fs"
import type { StoreError } from "@alisio/domain/Errors"
import * as Effect from "effect/Effect"
import type { Session, SessionStoreService } from "./SessionStore.js"

/** A path as a shell reads it back: bare when it holds nothing a shell would split or expand. */
export const shellWord = (text: string): string =>
  /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`

/**
 * Why `session` is not resumed in `cwd` as things stand, with the ways on; `undefined` when it
 * works there. `start` is how the person starts the surface they use (`alisio run`, `alisio`).
 */
export const resumedElsewhere = (session: Session, cwd: string, start: string): string | undefined => {
  if (session.cwd === cwd) return undefined
  const id = session.id.slice(0, 8)
  const there = fs.statSync(session.cwd, { throwIfNoEntry: false })?.isDirectory() === true
  return there
    ? `Session ${id} works in ${session.cwd}, not in this folder (${cwd}). ` +
        `Go on there with \`${start} --cwd ${shellWord(session.cwd)} -s ${id}\`, ` +
        `or move it to this folder with \`${start} --cwd . -s ${id}\`.`
    : `Session ${id} worked in ${session.cwd}, which is no longer there. ` +
        `Move it with \`--cwd <folder>\`: \`${start} --cwd . -s ${id}\` for this folder.`
}

// Deeper than any tree of subagents goes; a loop in corrupt rows stops here.
const MAX_DEPTH = 32

/**
 * Why `session` is not resumed by a person: it is a subagent's child session, which runs only as
 * its parent's task, with that agent's instructions and narrowed tools (going on in it as an
 * ordinary session would give it every tool and none of its agent's prompt). Names the root
 * session to go on with instead; `undefined` for a root session.
 */
export const childSessionRefusal = (
  store: SessionStoreService,
  session: Session,
  start: string
): Effect.Effect<string | undefined, StoreError> =>
  Effect.gen(function* () {
    if (session.parentId === undefined) return undefined
    let root = session
    for (let depth = 0; root.parentId !== undefined && depth < MAX_DEPTH; depth++) {
      const parent = yield* Effect.catchTag(
        Effect.asSome(store.session(root.parentId)),
        "SessionNotFoundError",
        () => Effect.succeedNone
      )
      if (parent._tag === "None") break
      root = parent.value
    }
    const id = session.id.slice(0, 8)
    const rootId = root.id.slice(0, 8)
    const what = session.title === undefined ? "a subagent's session" : `a subagent's session ("${session.title}")`
    return (
      `Session ${id} is ${what} inside session ${rootId}; it runs only as that session's task. ` +
      `Go on with ${rootId}: \`${start} -s ${rootId}\` (\`alisio sessions show ${id}\` shows what it did).`
    )
  })
