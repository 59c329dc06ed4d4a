import { RunId, SessionId } from "@alisio/domain/Ids"
import type { Limits } from "@alisio/domain/Limits"
import type { KnownRunEvent, RunStatus } from "@alisio/domain/RunEvent"
import { Runner, type RunOptions } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { approveAll } from "@alisio/runtime/Tools"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { chooseModel, loadSetup, registerProviders, runtimeLayer, type Setup } from "./App.js"
import * as BrokenPipe from "./BrokenPipe.js"
import { CliError, ExitCode, setExitCode, usageError } from "./CliError.js"
import type { RunFlags } from "./main.js"
import { makeJsonWriter, makeTextRenderer } from "./Render.js"

const exitCodeFor = (status: RunStatus): number =>
  status === "completed"
    ? ExitCode.completed
    : status === "turns_exceeded"
      ? ExitCode.turnsExceeded
      : status === "cancelled" || status === "interrupted"
        ? ExitCode.cancelled
        : ExitCode.failed

/** The prompt from the arguments, or from stdin when it is `-` or piped with no arguments. */
const readPrompt = (words: ReadonlyArray<string>): Effect.Effect<string, CliError> => {
  const fromStdin = (words.length === 1 && words[0] === "-") || (words.length === 0 && process.stdin.isTTY !== true)
  if (!fromStdin) {
    const prompt = words.join(" ").trim()
    return prompt === ""
      ? Effect.fail(
          usageError("No prompt: give the task as arguments, or pipe it on stdin (`echo task | alisio run`).")
        )
      : Effect.succeed(prompt)
  }
  return Effect.promise(async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString("utf8").trim()
  }).pipe(
    Effect.filterOrFail(
      (prompt) => prompt !== "",
      () => usageError("No prompt: stdin was empty.")
    )
  )
}

const limitsOf = (flags: RunFlags): Limits => {
  const pick = <K extends keyof Limits>(key: K, value: Option.Option<number>) =>
    Option.isSome(value) ? { [key]: value.value } : {}
  return {
    ...pick("maxTurns", flags.maxTurns),
    ...pick("timeoutMs", flags.timeout),
    ...pick("firstTokenTimeoutMs", flags.firstTokenTimeout),
    ...pick("firstTokenRetries", flags.firstTokenRetries),
    ...pick("streamIdleTimeoutMs", flags.streamIdleTimeout),
    ...pick("maxOutputTokens", flags.maxOutputTokens),
    ...pick("truncationRecoveries", flags.truncationRecoveries)
  }
}

const systemPrompt = (cwd: string): string =>
  [
    "You are Alisio, a coding agent working in a person's project.",
    `The workspace is ${cwd}; paths are relative to it.`,
    "Use the tools to read, search, change files and run commands; check your work before you answer.",
    "Answer concisely in plain text."
  ].join("\n")

/** The session to run in: `--session`, `--continue`, the run a repeated `--request-id` belongs to, or a new one. */
const chooseSession = (setup: Setup, flags: RunFlags) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    if (Option.isSome(flags.session)) {
      const found = yield* Effect.either(store.session(SessionId.make(flags.session.value)))
      if (found._tag === "Right") return Option.some(found.right.id)
      if (found.left._tag === "SessionNotFoundError") {
        return yield* usageError(
          `No session ${flags.session.value}. \`alisio sessions list\` shows the sessions of this directory.`
        )
      }
      return yield* Effect.fail(found.left)
    }
    if (flags.continue) {
      const latest = yield* store.latestSession(setup.cwd)
      if (Option.isSome(latest)) return Option.some(latest.value.id)
      process.stderr.write("alisio: no earlier session in this directory; starting a new one\n")
      return Option.none()
    }
    if (Option.isSome(flags.requestId) && store.runByRequest !== undefined) {
      const recent = yield* store.sessions({ cwd: setup.cwd, parentId: null, limit: 200 })
      for (const session of recent) {
        const run = yield* store.runByRequest(session.id, flags.requestId.value)
        if (Option.isSome(run)) return Option.some(session.id)
      }
    }
    return Option.none<SessionId>()
  })

/**
 * A run whose stdout reader went away (`| head -1`) has nobody to report to: it is cancelled (CLI-2).
 * The run is interrupted and awaited, never raced: a race would let the command end, and the
 * database close, while the run's finalizer still writes `run_cancelled`.
 */
const cancelledWhenStdoutCloses = (runner: Runner["Type"]) => ({
  ...runner,
  run: (options: RunOptions) =>
    Effect.scoped(
      Effect.gen(function* () {
        const running = yield* Effect.fork(runner.run(options))
        const closed = yield* Effect.forkScoped(Effect.zipRight(BrokenPipe.stdoutClosed, Fiber.interrupt(running)))
        const exit = yield* Fiber.await(running).pipe(Effect.onInterrupt(() => Fiber.interrupt(running)))
        if (Exit.isFailure(exit) && Exit.isInterrupted(exit) && Option.isSome(yield* Fiber.poll(closed))) {
          return yield* new CliError({
            message: "stdout was closed (broken pipe); the run was cancelled",
            exitCode: ExitCode.cancelled
          })
        }
        return yield* exit
      })
    )
})

/** `alisio run`: one task, headless (CLI-1, CLI-2). */
export const runCommand = (flags: RunFlags) =>
  Effect.gen(function* () {
    if (flags.continue && Option.isSome(flags.session)) {
      return yield* usageError(
        "--continue and --session both choose the session to resume: give one of them (see alisio run --help)"
      )
    }
    const prompt = yield* readPrompt(flags.prompt)
    const setup = yield* loadSetup({
      ...(Option.isSome(flags.cwd) ? { cwd: flags.cwd.value } : {}),
      trustProject: flags.trustProject,
      flags: { limits: limitsOf(flags) }
    })
    const program = Effect.gen(function* () {
      yield* registerProviders(setup)
      const store = yield* SessionStore
      if (store.interruptRuns !== undefined) yield* store.interruptRuns()
      const model = yield* chooseModel(setup, flags.model)
      const sessionId = yield* chooseSession(setup, flags)
      const render: (event: KnownRunEvent) => void = flags.json ? makeJsonWriter() : makeTextRenderer()
      const runner = cancelledWhenStdoutCloses(yield* Runner)
      const outcome = yield* runner.run({
        cwd: setup.cwd,
        prompt,
        model: model.model,
        provider: model.service,
        ...(Option.isSome(model.info) ? { modelInfo: model.info.value } : {}),
        system: systemPrompt(setup.cwd),
        readOnly: flags.readOnly,
        ...(flags.yes
          ? { approvals: approveAll }
          : setup.config.approvals === undefined
            ? {}
            : { approvals: setup.config.approvals }),
        ...(setup.config.limits === undefined ? {} : { limits: setup.config.limits }),
        ...(Option.isSome(sessionId) ? { sessionId: sessionId.value } : {}),
        ...(Option.isSome(flags.runId) ? { runId: RunId.make(flags.runId.value) } : {}),
        ...(Option.isSome(flags.requestId) ? { requestId: flags.requestId.value } : {}),
        ...(Option.isSome(flags.correlationId) ? { correlationId: flags.correlationId.value } : {}),
        onEvent: (event) => Effect.sync(() => render(event))
      })
      if (outcome.existing) {
        if (!flags.json)
          process.stderr.write(
            `alisio: request ${Option.getOrElse(flags.requestId, () => "")} already ran as ${outcome.runId}; replaying it\n`
          )
        const stored = yield* store.events(outcome.sessionId, outcome.runId)
        for (const event of stored) render(event)
      }
      setExitCode(exitCodeFor(outcome.status))
    })
    yield* program.pipe(
      Effect.catchTags({
        SessionLockedError: (error) => Effect.fail(usageError(error.message)),
        SessionNotFoundError: (error) => Effect.fail(usageError(error.message)),
        StoreError: (error) => Effect.fail(new CliError({ message: error.message, exitCode: ExitCode.failed }))
      }),
      Effect.provide(runtimeLayer(setup, { approveAll: flags.yes }))
    )
  })
