import { type ChildProcess, spawn } from "node:child_process"
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
import { OutputBuffer } from "./internal/outputBuffer.js"
import { stopGroup } from "./internal/processGroup.js"
import { integerAtLeast } from "./internal/schema.js"

export interface BashOptions {
  /** Timeout of a call that names none (default 2 minutes). */
  readonly defaultTimeoutMs?: number
  /** The longest timeout a call may ask for (default 10 minutes). */
  readonly maxTimeoutMs?: number
  /** Output kept for the result, head and tail (default 30 000 characters). */
  readonly maxOutputChars?: number
  /** Time between SIGTERM and SIGKILL when the process group is stopped (default 2 s). */
  readonly killGraceMs?: number
}

const Input = Schema.Struct({
  command: Schema.String.annotations({ description: "The command line, run by bash -c in the workspace." }),
  timeout_ms: Schema.optional(integerAtLeast(1, "Stop the command after this many milliseconds.")),
  description: Schema.optional(
    Schema.String.annotations({ description: "A few words on what the command does, shown to the person." })
  )
})

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Processes the command left running in the background, stopped when it ended. */
  readonly strays: boolean
}

/**
 * `bash` (TL-1): runs a command in the workspace in a process group of its own, streaming its
 * output as progress. Interruption or the timeout stops the whole group.
 */
export const make = (options: BashOptions = {}): Tool => {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000
  const maxTimeoutMs = Math.max(options.maxTimeoutMs ?? 600_000, defaultTimeoutMs)
  const maxOutputChars = options.maxOutputChars ?? 30_000
  const killGraceMs = options.killGraceMs ?? 2_000
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
        const finished = yield* runInGroup(input.command, context.cwd, killGraceMs, (text) => {
          output.append(text)
          return context.progress(text)
        }).pipe(Effect.timeoutOption(Duration.millis(timeoutMs)))
        const text = output.toString()
        const shown = text.length === 0 ? "(no output)" : text.endsWith("\n") ? text.slice(0, -1) : text
        if (Option.isNone(finished)) {
          return textResult(
            `${shown}\n[timed out after ${timeoutMs} ms; the command and its child processes were stopped]`,
            { isError: true }
          )
        }
        const { code, signal, strays } = finished.value
        const status = code !== null ? `[exit code ${code}]` : `[killed by ${signal ?? "a signal"}]`
        const strayNote = strays ? "\n[processes it left in the background were stopped]" : ""
        return textResult(`${shown}\n${status}${strayNote}`)
      })
  })
}

/**
 * Spawns `bash -c command` as the leader of a new process group and waits for it and its output.
 * Closing the scope (interruption, timeout) stops the whole group: SIGTERM, then SIGKILL.
 */
const runInGroup = (
  command: string,
  cwd: string,
  killGraceMs: number,
  onOutput: (text: string) => Effect.Effect<void>
): Effect.Effect<Finished, ToolError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const exited = yield* Deferred.make<Omit<Finished, "strays">, ToolError>()
      const child = yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            const child = spawn("bash", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] })
            child.on("error", (error) => {
              const message = `bash could not start in ${cwd}: ${error.message}`
              Deferred.unsafeDone(exited, Exit.fail(new ToolError({ message })))
            })
            child.on("exit", (code, signal) => {
              Deferred.unsafeDone(exited, Exit.succeed({ code, signal }))
            })
            return child
          },
          catch: (error) => new ToolError({ message: `bash could not start: ${String(error)}` })
        }),
        (child) => (child.pid === undefined ? Effect.void : stopGroup(child.pid, killGraceMs))
      )
      const drain = yield* Effect.fork(Stream.runForEach(outputOf(child), onOutput))
      const status = yield* Deferred.await(exited)
      // Background processes would hold the pipes open: stop them once the command ended.
      const strays = child.pid === undefined ? false : yield* stopGroup(child.pid, killGraceMs)
      yield* Fiber.join(drain)
      return { ...status, strays }
    })
  )

/** stdout and stderr chunks in arrival order, ending when both pipes closed. */
const outputOf = (child: ChildProcess): Stream.Stream<string> =>
  Stream.async<string>((emit) => {
    let open = 0
    for (const pipe of [child.stdout, child.stderr]) {
      if (pipe === null) continue
      open++
      pipe.setEncoding("utf8")
      pipe.on("data", (text: string) => void emit.single(text))
      pipe.on("close", () => {
        if (--open === 0) void emit.end()
      })
    }
    if (open === 0) void emit.end()
  }, "unbounded")
