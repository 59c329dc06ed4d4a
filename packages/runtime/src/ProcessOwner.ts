import { readFileSync } from "node:fs"
import { hostname } from "node:os"
import * as Effect from "effect/Effect"

/** The process that owns a run or lock: a pid plus a token telling a reused pid apart. */
export interface ProcessOwner {
  readonly pid: number
  readonly token: string
  readonly host?: string
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

const readBootId = (): string | undefined => readText("/proc/sys/kernel/random/boot_id")?.trim() || undefined

interface ProcStat {
  readonly state: string
  /** Start time in clock ticks since boot: with the boot id, unique for the life of the machine. */
  readonly startTicks: string
}

const readProcStat = (pid: number): ProcStat | undefined => {
  const text = readText(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  // The command name sits in parentheses and may itself hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  const state = fields[0]
  const startTicks = fields[19]
  return state === undefined || startTicks === undefined ? undefined : { state, startTicks }
}

const LINUX = "linux:"

const makeCurrentOwner = (): ProcessOwner => {
  const bootId = readBootId()
  const stat = bootId === undefined ? undefined : readProcStat(process.pid)
  const token =
    bootId !== undefined && stat !== undefined
      ? `${LINUX}${bootId}:${stat.startTicks}`
      : // Without /proc a reused pid cannot be told apart; the start time at least names this process.
        `start:${Math.round(performance.timeOrigin)}`
  return { pid: process.pid, token, host: hostname() }
}

/** This process, as the owner of the runs and locks it takes. */
export const currentOwner: ProcessOwner = makeCurrentOwner()

/** Whether process `pid` of this machine may still run (it exists, perhaps as another user's). */
export const signalZero = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether `owner` is still running; synchronous, for callers that check many owners at once. */
export const isAliveSync = (owner: ProcessOwner): boolean => {
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) return false
  if (owner.pid === currentOwner.pid && owner.token === currentOwner.token) return true
  const otherHost = owner.host !== undefined && owner.host !== currentOwner.host
  const bootId = owner.token.startsWith(LINUX) ? readBootId() : undefined
  if (bootId !== undefined) {
    const [ownerBoot, ownerTicks] = owner.token.slice(LINUX.length).split(":")
    // Started before the last boot, or on another machine (which a WAL database cannot be shared with).
    if (ownerBoot !== bootId) return false
    // Same kernel, other host name: another container, whose pids this one cannot see. Assume it runs.
    if (otherHost) return true
    const stat = readProcStat(owner.pid)
    if (stat === undefined || stat.state === "Z" || stat.state === "X") return false
    return stat.startTicks === ownerTicks
  }
  return otherHost || signalZero(owner.pid)
}

/**
 * Whether `owner` is still running. On Linux the boot id and the process start time tell a
 * reused pid apart; elsewhere only the pid is checked. A process that cannot be checked from
 * here (another host name) counts as running: a live lock is never taken over.
 */
export const isAlive = (owner: ProcessOwner): Effect.Effect<boolean> => Effect.sync(() => isAliveSync(owner))
