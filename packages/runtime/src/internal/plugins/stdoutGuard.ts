// What an external plugin prints to stdout (a `console.log` at import, in `setup`, in a tool) goes
// to stderr: stdout carries the answer, and `run --json` must stay pure JSONL (PL-6). A write is
// the plugin's when a frame of its stack lies in one of the plugins' folders.

import { fileURLToPath, pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"

/** Deep enough for `console.log`'s own frames between the plugin's call and `write`. */
const STACK_FRAMES = 40

const writtenFrom = (markers: ReadonlyArray<string>): boolean => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = STACK_FRAMES
  const holder: { stack?: string } = {}
  Error.captureStackTrace(holder, writtenFrom)
  Error.stackTraceLimit = limit
  const stack = holder.stack ?? ""
  return markers.some((marker) => stack.includes(marker))
}

/** Sends the plugins' stdout writes to stderr for the life of the scope. */
export const guardStdout = (roots: ReadonlyArray<string>) => {
  const host = fileURLToPath(import.meta.url)
  // A folder holding Alisio itself would send Alisio's own output away.
  const markers = roots.flatMap((root) => {
    const folder = root.endsWith("/") ? root : `${root}/`
    return host.startsWith(folder) ? [] : [folder, pathToFileURL(folder).href]
  })
  if (markers.length === 0) return Effect.void
  return Effect.acquireRelease(
    Effect.sync(() => {
      const stdout = process.stdout
      const original = stdout.write
      const guarded = function (this: unknown, ...args: Parameters<typeof original>) {
        const target = writtenFrom(markers) ? process.stderr : stdout
        return (target === stdout ? original : process.stderr.write).apply(target, args as never)
      } as typeof original
      stdout.write = guarded
      return { original, guarded }
    }),
    ({ original, guarded }) =>
      Effect.sync(() => {
        if (process.stdout.write === guarded) process.stdout.write = original
      })
  ).pipe(Effect.asVoid)
}
