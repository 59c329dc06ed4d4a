// A session works in one folder: its files, its project's configuration and instructions are
// there. Resuming it from another folder is a choice made with `--cwd`, never an accident.

import * as fs from "node:fs"
import type { Session } from "./SessionStore.js"

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
