import * as fs from "node:fs"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * Whether any process of the group is still running. Zombies do not count: in containers whose
 * PID 1 does not reap orphans, a killed grandchild stays a zombie forever.
 */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  if (process.platform !== "linux") return true
  let names: Array<string>
  try {
    names = fs.readdirSync("/proc")
  } catch {
    return true
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
    } catch {
      continue
    }
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) === pgid && fields[0] !== "Z") return true
  }
  return false
}

const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // Already gone.
  }
}

// The grace is real time: the processes live in the operating system, not in the fiber's
// (possibly test) clock, and a stop must finish even while a TestClock stands still.
const liveClock = Clock.make()
const POLL_MS = 20

const waitGone = (pgid: number, ms: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (let waited = 0; waited < ms; waited += POLL_MS) {
      if (!groupAlive(pgid)) return true
      yield* Effect.sleep(POLL_MS)
    }
    return !groupAlive(pgid)
  }).pipe(Effect.withClock(liveClock))

/**
 * Stops every process of a group: SIGTERM, then SIGKILL for those still running after the grace.
 * Returns whether anything was running.
 */
export const stopGroup = (pgid: number, graceMs: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    if (!groupAlive(pgid)) return false
    signalGroup(pgid, "SIGTERM")
    if (!(yield* waitGone(pgid, graceMs))) {
      signalGroup(pgid, "SIGKILL")
      yield* waitGone(pgid, 1_000)
    }
    return true
  }).pipe(Effect.uninterruptible)
