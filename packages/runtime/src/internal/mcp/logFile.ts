// One log file per MCP server under the state folder (private, ST-6): a server's stderr goes there,
// never to the terminal, with a line for each start, failure and stop.
import * as fs from "node:fs"
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { makeFoldersSync } from "../../Folders.js"
import { PRIVATE_FILE, PRIVATE_FOLDER } from "../privateFiles.js"

// A log past this size is moved to `<name>.log.1` when the server starts again.
const ROTATE_BYTES = 1024 * 1024

/**
 * While a server runs, its log never grows past this: the stderr that would pass it first moves the
 * log to `<name>.log.1` (replacing the older one), so a server writing without end keeps at most
 * twice this on disk, its latest output.
 */
export const RUNNING_LIMIT_BYTES = 4 * 1024 * 1024

/** The log of one server: where it is, and the size it had when this start began. */
export interface ServerLog {
  readonly file: string
  /** Where this start's output begins (for the reason a start failed); 0 once the log was moved. */
  startOffset: number
}

export const logFileOf = (folder: string, server: string): string =>
  path.join(folder, `${server.replace(/[^A-Za-z0-9_.-]/g, "_")}.log`)

/** Appends one line, `[time] text`; a log that cannot be written is no reason to fail anything. */
export const appendLog = (file: string, text: string): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync(() => {
      try {
        fs.appendFileSync(file, `[${new Date(now).toISOString()}] ${text}\n`, { mode: PRIVATE_FILE })
      } catch {
        // No log then.
      }
    })
  )

/** Appends one line from a callback, where no clock is at hand: without a time. */
export const appendLogNow = (file: string, text: string): void => {
  try {
    fs.appendFileSync(file, `${text}\n`, { mode: PRIVATE_FILE })
  } catch {
    // No log then.
  }
}

/**
 * Prepares a server's log for a start: the folder (0700) and file (0600) exist, a large log is
 * rotated, and a start line is written. Returns the log and a descriptor open for appending, for
 * the server's stderr (the caller closes it once the process has it); "ignore" when it cannot be opened.
 */
export const openLog = (
  folder: string,
  server: string,
  what: string
): Effect.Effect<{ readonly log: ServerLog; readonly fd: number | "ignore" }> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync(() => {
      const file = logFileOf(folder, server)
      try {
        makeFoldersSync(folder, PRIVATE_FOLDER)
        fs.chmodSync(folder, PRIVATE_FOLDER)
        const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0
        if (size > ROTATE_BYTES) fs.renameSync(file, `${file}.1`)
        const fd = fs.openSync(file, "a", PRIVATE_FILE)
        fs.fchmodSync(fd, PRIVATE_FILE)
        fs.writeSync(fd, `[${new Date(now).toISOString()}] starting ${what}\n`)
        return { log: { file, startOffset: fs.fstatSync(fd).size }, fd }
      } catch {
        return { log: { file, startOffset: 0 }, fd: "ignore" as const }
      }
    })
  )

/** Where a server's stderr goes: into its log, bounded while it runs. */
export interface StderrSink {
  readonly write: (chunk: Buffer) => void
  readonly close: () => void
}

/**
 * Writes a running server's stderr into its log (through `fd`, which the sink owns and closes),
 * moving the log to `<name>.log.1` whenever a chunk would take it past `limitBytes`, with a line
 * saying so at the top of the fresh one.
 */
export const stderrSink = (
  log: ServerLog,
  fd: number,
  limitBytes: number = RUNNING_LIMIT_BYTES
): Effect.Effect<StderrSink> =>
  Effect.map(Effect.clock, (clock) => {
    let current: number | undefined = fd
    let size = sizeOf(fd)
    const megabytes = `${Math.round((limitBytes / (1024 * 1024)) * 10) / 10} MB`
    const rotate = (open: number) => {
      fs.renameSync(log.file, `${log.file}.1`)
      const fresh = fs.openSync(log.file, "a", PRIVATE_FILE)
      fs.fchmodSync(fresh, PRIVATE_FILE)
      fs.closeSync(open)
      const at = new Date(clock.unsafeCurrentTimeMillis()).toISOString()
      const note = `[${at}] the log reached ${megabytes}: what came before is in ${path.basename(log.file)}.1\n`
      fs.writeSync(fresh, note)
      log.startOffset = 0
      size = note.length
      return fresh
    }
    return {
      write: (chunk) => {
        if (current === undefined) return
        try {
          if (size + chunk.length > limitBytes && size > 0) current = rotate(current)
          fs.writeSync(current, chunk)
          size += chunk.length
        } catch {
          // A log that cannot be written is no reason to fail the server.
        }
      },
      close: () => {
        if (current === undefined) return
        const open = current
        current = undefined
        try {
          fs.closeSync(open)
        } catch {
          // Already closed.
        }
      }
    }
  })

const sizeOf = (fd: number): number => {
  try {
    return fs.fstatSync(fd).size
  } catch {
    return 0
  }
}

export const closeFd = (fd: number | "ignore"): Effect.Effect<void> =>
  Effect.sync(() => {
    if (fd === "ignore") return
    try {
      fs.closeSync(fd)
    } catch {
      // Already closed.
    }
  })

/** The last non-empty line the server wrote since this start began, shortened: why it failed, often. */
export const lastLine = (log: ServerLog): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    try {
      const size = fs.statSync(log.file).size
      const from = Math.max(log.startOffset, size - 4096)
      if (size <= from) return undefined
      const buffer = Buffer.alloc(size - from)
      const fd = fs.openSync(log.file, "r")
      try {
        fs.readSync(fd, buffer, 0, buffer.length, from)
      } finally {
        fs.closeSync(fd)
      }
      const lines = buffer
        .toString("utf8")
        .split("\n")
        .map((each) => each.trim())
        // Our own lines, and Node's closing "Node.js v20.…" after a crash, say nothing of why.
        .filter((each) => each !== "" && !/^\[\d{4}-\d\d-\d\dT[^\]]*\] /.test(each) && !/^Node\.js v\d/.test(each))
      // A crash's stack ends far from its message: the last line naming an error says more.
      const line = [...lines].reverse().find((each) => /\berror\b/i.test(each) && !/^at /.test(each)) ?? lines.at(-1)
      return line === undefined ? undefined : line.length > 200 ? `${line.slice(0, 199)}…` : line
    } catch {
      return undefined
    }
  })
