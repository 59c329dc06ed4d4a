// What an external plugin does to the process it shares (PL-6): what it prints to stdout (a
// `console.log` at import, in `setup`, in a tool) goes to stderr, as stdout carries the answer and
// `run --json` must stay pure JSONL; its `process.exit` throws instead of ending Alisio, so it is
// the plugin's crash and the session is kept. A call is the plugin's when a frame of its stack
// lies in one of the plugins' folders, or when it runs as the plugin's code (pluginCode.ts): a
// callback it scheduled, a fiber it runs in.
// An imported module cannot be unloaded, and a timer a plugin left running still fires after its
// host closed: stdout stays guarded, against every plugin folder seen, until the process ends.

import { fileURLToPath, pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import { followPluginCallbacks, runningPluginCode } from "./pluginCode.js"

/** Deep enough for `console.log`'s own frames between the plugin's call and `write`. */
const STACK_FRAMES = 40

/** The folders (as paths and as URLs) of the external plugins imported in this process. */
const pluginFolders: Array<string> = []

// Node's own formatting: a formatter someone installed (source maps) may throw, and a throw inside
// an async hook ends the process.
const stackHolds = (below: (...args: never) => unknown): boolean => {
  const formatter = Error as { prepareStackTrace?: unknown }
  const limit = Error.stackTraceLimit
  const prepare = formatter.prepareStackTrace
  Error.stackTraceLimit = STACK_FRAMES
  formatter.prepareStackTrace = undefined
  try {
    const holder: { stack?: string } = {}
    Error.captureStackTrace(holder, below)
    const stack = holder.stack ?? ""
    return pluginFolders.some((folder) => stack.includes(folder))
  } catch {
    return false
  } finally {
    Error.stackTraceLimit = limit
    formatter.prepareStackTrace = prepare
  }
}

const calledFrom = (below: (...args: never) => unknown): boolean => runningPluginCode() || stackHolds(below)

let stdoutGuarded = false

/** Sends plugins' stdout writes to stderr from now on (once per process). */
const guardStdout = (): void => {
  if (stdoutGuarded) return
  stdoutGuarded = true
  const scheduledByPlugin = (): boolean => stackHolds(scheduledByPlugin)
  followPluginCallbacks(scheduledByPlugin)
  const stdout = process.stdout
  const write = stdout.write
  const guardedWrite = function guardedWrite(this: unknown, ...args: Parameters<typeof write>) {
    return calledFrom(guardedWrite)
      ? process.stderr.write(...(args as Parameters<typeof process.stderr.write>))
      : write.apply(stdout, args)
  } as typeof write
  stdout.write = guardedWrite
}

/** Guards stdout against the plugins in `roots` until the process ends, `process.exit` for the life of the scope. */
export const guardProcess = (roots: ReadonlyArray<string>) => {
  const host = fileURLToPath(import.meta.url)
  // A folder holding Alisio itself would send Alisio's own output away.
  const markers = roots.flatMap((root) => {
    const folder = root.endsWith("/") ? root : `${root}/`
    return host.startsWith(folder) ? [] : [folder, pathToFileURL(folder).href]
  })
  if (markers.length === 0) return Effect.void
  return Effect.acquireRelease(
    Effect.sync(() => {
      for (const marker of markers) if (!pluginFolders.includes(marker)) pluginFolders.push(marker)
      guardStdout()
      const exit = process.exit
      const guardedExit = function guardedExit(code?: number | string | null) {
        if (calledFrom(guardedExit)) {
          throw new Error(`it called process.exit(${code ?? ""}), which plugins may not do; Alisio goes on`)
        }
        return exit.call(process, code)
      } as typeof exit
      process.exit = guardedExit
      return { exit, guardedExit }
    }),
    (saved) =>
      Effect.sync(() => {
        if (process.exit === saved.guardedExit) process.exit = saved.exit
      })
  ).pipe(Effect.asVoid)
}
