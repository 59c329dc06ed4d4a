import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { terminalSafe } from "../TerminalText.js"
import { OutputBuffer } from "./internal/outputBuffer.js"
import { type CommandProcess, describeStopped, makeMarker, stopCommand, track } from "./internal/processTree.js"
import { commandLine, integerAtLeast } from "./internal/schema.js"
import { type ShellEnvironmentPolicy, shellEnvironment } from "./ShellEnvironment.js"

export interface BashOptions {
  /** Timeout of a call that names none (default 2 minutes). */
  readonly defaultTimeoutMs?: number
  /** The longest timeout a call may ask for (default 10 minutes). */
  readonly maxTimeoutMs?: number
  /** Output kept for the result, head and tail (default 30 000 characters). */
  readonly maxOutputChars?: number
  /** Time between SIGTERM and SIGKILL when the command's processes are stopped (default 2 s). */
  readonly killGraceMs?: number
  /** What commands inherit of the environment (TL-8); provider keys and secrets are left out by default. */
  readonly environment?: ShellEnvironmentPolicy
  /** The environment the policy starts from (default: this process's). */
  readonly baseEnvironment?: NodeJS.ProcessEnv
}

const Input = Schema.Struct({
  command: commandLine("The command line, run by bash -c in the workspace."),
  timeout_ms: Schema.optional(integerAtLeast(1, "Stop the command after this many milliseconds.")),
  description: Schema.optional(
    Schema.String.annotations({ description: "A few words on what the command does, shown to the person." })
  )
})

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Processes the command left running in the background, stopped when it ended. */
  readonly stopped: ReadonlyArray<CommandProcess> | undefined
}

/**
 * What no command may wait for, as nobody can answer: a command has no terminal and an empty
 * stdin, so `git commit` without -m, `git merge` or `git rebase --continue` would open the user's
 * editor (vi) and wait there until the timeout, giving the model its screen. With `true` as the
 * editor, git keeps the message it has, or stops at once ("Aborting commit due to empty commit
 * message"). The user's `shell.environment.set` still decides.
 */
const NO_PROMPTS: Readonly<Record<string, string>> = { GIT_EDITOR: "true", GIT_TERMINAL_PROMPT: "0" }

/**
 * `bash` (TL-1): runs a command in the workspace, streaming its output as progress. Every process
 * it starts is tracked (TL-7): interruption or the timeout stops them all, and those still running
 * when the command ends are stopped and named in the result. Provider keys and variables named
 * like secrets stay out of its environment (TL-8).
 */
export const make = (options: BashOptions = {}): Tool => {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000
  const maxTimeoutMs = Math.max(options.maxTimeoutMs ?? 600_000, defaultTimeoutMs)
  const maxOutputChars = options.maxOutputChars ?? 30_000
  const killGraceMs = options.killGraceMs ?? 2_000
  const environment = {
    ...shellEnvironment(options.environment, options.baseEnvironment),
    ...NO_PROMPTS,
    ...options.environment?.set
  }
  return defineTool({
    name: "bash",
    description:
      "Runs a bash command in the workspace and returns its exit code and output (stdout and stderr " +
      `interleaved; long output keeps its start and end). Timeout ${defaultTimeoutMs} ms unless timeout_ms ` +
      `(at most ${maxTimeoutMs}). stdin is empty; processes left in the background are stopped when the command ends.`,
    effect: "external",
    input: Input,
    run: (input, context) =>
      Effect.gen(function* () {
        const timeoutMs = Math.min(input.timeout_ms ?? defaultTimeoutMs, maxTimeoutMs)
        const output = new OutputBuffer(maxOutputChars)
        const finished = yield* runTracked(input.command, context.cwd, environment, killGraceMs, (text) => {
          output.append(text)
          return context.progress(text)
        }).pipe(Effect.timeoutOption(Duration.millis(timeoutMs)))
        const text = asShown(output.toString())
        const shown = text.length === 0 ? "(no output)" : text.endsWith("\n") ? text.slice(0, -1) : text
        if (Option.isNone(finished)) {
          return textResult(
            `${shown}\n[timed out after ${timeoutMs} ms; the command and its child processes were stopped]`,
            { isError: true }
          )
        }
        const { code, signal, stopped } = finished.value
        const status = code !== null ? `[exit code ${code}]` : `[killed by ${signal ?? "a signal"}]`
        const note = describeStopped(stopped)
        return textResult(`${shown}\n${status}${note === undefined ? "" : `\n[${note}]`}`)
      })
  })
}

/**
 * A command's output as the model reads it: what a terminal would show. Colours and other escape
 * sequences go (an OSC payload, invisible on the person's terminal, would reach the model unseen
 * by them, and colour codes cost tokens), and a line redrawn with \r (a progress bar) keeps only
 * its last state. Progress, streamed to observers, is theirs to clean.
 */
const asShown = (text: string): string => terminalSafe(text.replace(/[^\n\r]*\r(?![\r\n]|$)/g, ""))

/**
 * Spawns `bash -c command` as the leader of a new session and process group, marked so that what
 * it detaches can be found, and waits for it and its output. Closing the scope (interruption,
 * timeout) stops every process of the command: SIGTERM, then SIGKILL.
 */
const runTracked = (
  command: string,
  cwd: string,
  environment: Record<string, string>,
  killGraceMs: number,
  onOutput: (text: string) => Effect.Effect<void>
): Effect.Effect<Finished, ToolError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const exited = yield* Deferred.make<Omit<Finished, "stopped">, ToolError>()
      const marker = makeMarker()
      const tracked = yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            const child = spawn("bash", ["-c", command], {
              cwd,
              env: { ...environment, [marker.name]: marker.value },
              detached: true,
              stdio: ["ignore", "pipe", "pipe"]
            })
            child.on("error", (error) => {
              // Node blames bash for a missing working folder: spawn bash ENOENT.
              const message = !existsSync(cwd)
                ? `bash could not start: its working folder ${cwd} does not exist (any more); ` +
                  "the workspace was moved or removed, so create it again (mkdir -p) or start Alisio elsewhere"
                : `bash could not start in ${cwd}: ${error.message}`
              Deferred.unsafeDone(exited, Exit.fail(new ToolError({ message })))
            })
            child.on("exit", (code, signal) => {
              Deferred.unsafeDone(exited, Exit.succeed({ code, signal }))
            })
            return {
              child,
              command: child.pid === undefined ? undefined : track(child.pid, `${marker.name}=${marker.value}`)
            }
          },
          catch: (error) => new ToolError({ message: `bash could not start: ${String(error)}` })
        }),
        ({ command }) => (command === undefined ? Effect.void : Effect.asVoid(stopCommand(command, killGraceMs)))
      )
      const drain = yield* Effect.fork(Stream.runForEach(outputOf(tracked.child), onOutput))
      const status = yield* Deferred.await(exited)
      // Background processes would hold the pipes open: stop them once the command ended.
      const stopped = tracked.command === undefined ? [] : yield* stopCommand(tracked.command, killGraceMs)
      yield* Fiber.join(drain)
      return { ...status, stopped }
    })
  )

// Chunks waiting for the consumer; past this the pipes pause and the command waits on its writes,
// so a command printing gigabytes never piles them up in memory (a pipe chunk is at most 64 KiB).
const PENDING_CHUNKS = 16

/** stdout and stderr chunks in arrival order, ending when both pipes closed; back-pressured. */
const outputOf = (child: ChildProcess): Stream.Stream<string> =>
  Stream.async<string>(
    (emit) => {
      let open = 0
      for (const pipe of [child.stdout, child.stderr]) {
        if (pipe === null) continue
        open++
        pipe.setEncoding("utf8")
        pipe.on("data", (text: string) => {
          pipe.pause()
          void emit.single(text).then(() => pipe.resume())
        })
        pipe.on("close", () => {
          if (--open === 0) void emit.end()
        })
      }
      if (open === 0) void emit.end()
    },
    { bufferSize: PENDING_CHUNKS, strategy: "suspend" }
  )
