import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { currentOwner } from "../../ProcessOwner.js"

/**
 * Every process one command started (TL-7), found on Linux by scanning `/proc`. A command runs as
 * `bash` leading a new session and process group, with a marker variable in its environment.
 * A process belongs to it when it started after the command and is in that session or group
 * (background jobs, `nohup`, `set -m` jobs), carries the marker (what `setsid` and double forks
 * detach keeps its environment), or descends from one that does.
 *
 * Why this and not the alternatives: a cgroup would hold every descendant, but creating one needs
 * a delegated, writable cgroup v2 tree, which containers, CI machines and most login sessions do
 * not give; a subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`) is out of Node's reach without native
 * code. The scan needs no privilege. What it misses is a process that both leaves the session and
 * drops its environment (`env -i setsid …`): a command set on escaping can, as it could by
 * `systemd-run` or `ssh`; `bash` needs approval for that reason. Elsewhere than Linux only the
 * process group is tracked.
 */
export interface TrackedCommand {
  /** The pid of `bash`: also its session id and process group id. */
  readonly leader: number
  /** `NAME=value` in the command's environment. */
  readonly marker: string
  /** The leader's start time in clock ticks since boot; nothing older is the command's. */
  readonly startedAt: number
}

/** A process of the command, as the model is told about it. */
export interface CommandProcess {
  readonly pid: number
  readonly startedAt: number
  /** Its command line, shortened. */
  readonly command: string
}

export const MARKER_VARIABLE = "ALISIO_COMMAND"

/**
 * A fresh marker for a command's environment: the token of this process, its owner (so what a
 * killed process left running can be found at the next start, `stopOrphansOf`), then its own id.
 */
export const makeMarker = (): { readonly name: string; readonly value: string } => ({
  name: MARKER_VARIABLE,
  value: `${currentOwner.token}/${randomUUID()}`
})

const procAvailable = process.platform === "linux" && fs.existsSync("/proc/self/stat")

interface Stat {
  readonly pid: number
  readonly state: string
  readonly ppid: number
  readonly pgid: number
  readonly sid: number
  readonly startedAt: number
}

const readStat = (pid: number | string): Stat | undefined => {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // `pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice num_threads itrealvalue starttime …`; comm may hold spaces and ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return {
    pid: Number(pid),
    state: fields[0] ?? "?",
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    startedAt: Number(fields[19])
  }
}

/** The leader's identity, read right after it was spawned. */
export const track = (leader: number, marker: string): TrackedCommand => ({
  leader,
  marker,
  startedAt: procAvailable ? (readStat(leader)?.startedAt ?? 0) : 0
})

const hasMarker = (pid: number, marker: string): boolean => {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`).includes(marker)
  } catch {
    return false
  }
}

const commandLine = (pid: number): string => {
  let text = ""
  try {
    text = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim()
  } catch {
    // Gone, or not ours to read.
  }
  if (text === "") {
    try {
      text = `[${fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim()}]`
    } catch {
      text = "[unknown]"
    }
  }
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

/** Every process running but this one (zombies left out); `undefined` where `/proc` is missing. */
const liveProcesses = (): Array<Stat> | undefined => {
  if (!procAvailable) return undefined
  let names: Array<string>
  try {
    names = fs.readdirSync("/proc")
  } catch {
    return undefined
  }
  const live: Array<Stat> = []
  for (const name of names) {
    const first = name.charCodeAt(0)
    if (first < 48 || first > 57) continue
    const stat = readStat(name)
    if (stat !== undefined && stat.state !== "Z" && stat.pid !== process.pid) live.push(stat)
  }
  return live
}

/** The pids of `members` and, among `all`, of their descendants, whatever their session or environment. */
const withDescendants = (members: ReadonlyArray<Stat>, all: ReadonlyArray<Stat>): Set<number> => {
  const pids = new Set(members.map((stat) => stat.pid))
  let grew = pids.size > 0
  while (grew) {
    grew = false
    for (const stat of all) {
      if (!pids.has(stat.pid) && pids.has(stat.ppid)) {
        pids.add(stat.pid)
        grew = true
      }
    }
  }
  return pids
}

/**
 * The command's processes still running (zombies do not count: in containers whose PID 1 does not
 * reap orphans, a killed one stays a zombie for ever). `undefined` where `/proc` is missing.
 */
export const processesOf = (command: TrackedCommand): ReadonlyArray<CommandProcess> | undefined => {
  const running = liveProcesses()
  if (running === undefined) return undefined
  const recent = running.filter((stat) => stat.startedAt >= command.startedAt)
  const members = withDescendants(
    recent.filter(
      (stat) => stat.sid === command.leader || stat.pgid === command.leader || hasMarker(stat.pid, command.marker)
    ),
    recent
  )
  return recent
    .filter((stat) => members.has(stat.pid))
    .map((stat) => ({ pid: stat.pid, startedAt: stat.startedAt, command: commandLine(stat.pid) }))
}

const stillRunning = (each: CommandProcess): boolean => {
  const stat = readStat(each.pid)
  return stat !== undefined && stat.state !== "Z" && stat.startedAt === each.startedAt
}

const signal = (target: number, name: NodeJS.Signals): void => {
  try {
    process.kill(target, name)
  } catch {
    // Already gone.
  }
}

/** Without `/proc`: whether any process of the group runs. */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

// The grace is real time: the processes live in the operating system, not in the fiber's
// (possibly test) clock, and a stop must finish even while a TestClock stands still.
const liveClock = Clock.make()
const POLL_MS = 20

const waitUntil = (done: () => boolean, ms: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (let waited = 0; waited < ms; waited += POLL_MS) {
      if (done()) return true
      yield* Effect.sleep(POLL_MS)
    }
    return done()
  }).pipe(Effect.withClock(liveClock))

/**
 * Stops every process of the command: SIGTERM to its group and to each process found, then
 * SIGKILL to whatever still runs after the grace (found again, so what they started meanwhile
 * goes too). Returns the processes that were running, or `undefined` when they cannot be listed
 * (no `/proc`) and only the group was signalled; `[]` means none ran.
 */
export const stopCommand = (
  command: TrackedCommand,
  graceMs: number
): Effect.Effect<ReadonlyArray<CommandProcess> | undefined> =>
  Effect.gen(function* () {
    const found = processesOf(command)
    if (found === undefined) {
      if (!groupAlive(command.leader)) return []
      signal(-command.leader, "SIGTERM")
      if (!(yield* waitUntil(() => !groupAlive(command.leader), graceMs))) {
        signal(-command.leader, "SIGKILL")
        yield* waitUntil(() => !groupAlive(command.leader), 1_000)
      }
      return undefined
    }
    if (found.length === 0) return found
    signal(-command.leader, "SIGTERM")
    for (const each of found) if (stillRunning(each)) signal(each.pid, "SIGTERM")
    if (!(yield* waitUntil(() => !found.some(stillRunning), graceMs))) {
      signal(-command.leader, "SIGKILL")
      const left = [...found, ...(processesOf(command) ?? [])]
      for (const each of left) if (stillRunning(each)) signal(each.pid, "SIGKILL")
      yield* waitUntil(() => !left.some(stillRunning), 1_000)
    } else {
      // Whatever they started while stopping, e.g. a trap handler.
      for (const each of processesOf(command) ?? []) signal(each.pid, "SIGKILL")
    }
    return found
  }).pipe(Effect.uninterruptible)

/**
 * Kills what the commands and MCP servers of dead processes left running (ST-4): their processes
 * carry the owner's token in their marker, and a process that ended normally stopped its own, so
 * whatever still carries it was orphaned by a `kill -9` or a crash. Their descendants go too.
 * Called at start-up only when a dead owner's runs are found; Linux only. The pids killed.
 */
export const stopOrphansOf = (owners: ReadonlyArray<string>): ReadonlyArray<number> => {
  const running = owners.length === 0 ? undefined : liveProcesses()
  if (running === undefined) return []
  const markers = owners.map((token) => `${MARKER_VARIABLE}=${token}/`)
  const orphans = withDescendants(
    running.filter((stat) => markers.some((marker) => hasMarker(stat.pid, marker))),
    running
  )
  for (const pid of orphans) signal(pid, "SIGKILL")
  return [...orphans]
}

/** How the model hears about background processes stopped after its command ended. */
export const describeStopped = (stopped: ReadonlyArray<CommandProcess> | undefined): string | undefined => {
  if (stopped === undefined) return "processes it left in the background were stopped"
  if (stopped.length === 0) return undefined
  const shown = stopped.slice(0, 10).map((each) => `${each.command} (pid ${each.pid})`)
  const more = stopped.length > 10 ? `, and ${stopped.length - 10} more` : ""
  const count = `${stopped.length} background process${stopped.length === 1 ? "" : "es"}`
  return `killed ${count} left running: ${shown.join(", ")}${more}`
}
