import { RunId, type SessionId } from "@alisio/domain/Ids"
import type { KnownRunEvent, RunStatus } from "@alisio/domain/RunEvent"
import { sessionSettings } from "@alisio/runtime/CommandCatalog"
import { McpServers, mentionAttachments } from "@alisio/runtime/McpServers"
import { Runner, type RunOptions } from "@alisio/runtime/Runner"
import { type RunRecord, SessionStore } from "@alisio/runtime/SessionStore"
import { fromPrompt } from "@alisio/runtime/SessionTitles"
import { formatDiagnostic, SystemContext } from "@alisio/runtime/SystemContext"
import { approveAll } from "@alisio/runtime/Tools"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { loadSetup, registerProviders, runtimeLayer } from "./App.js"
import * as BrokenPipe from "./BrokenPipe.js"
import { CliError, ExitCode, setExitCode, usageError } from "./CliError.js"
import { reportUnreadable } from "./EventPages.js"
import type { RunFlags } from "./Flags.js"
import { followRun } from "./FollowRun.js"
import { jsonLine } from "./JsonLine.js"
import { limitsOf } from "./LimitFlags.js"
import { chooseModel } from "./ModelChoice.js"
import { checkFolder, writeAtomically } from "./OutputFile.js"
import { checkPromptSize, pipedInput, readAll, withPipedInput } from "./PipedInput.js"
import { pluginFlagsOf } from "./Plugins.js"
import { animate } from "./Progress.js"
import { makeJsonWriter, makeTextRenderer } from "./Render.js"
import { chooseSession } from "./SessionChoice.js"
import { commandsLayer, runTypedCommand, systemContextLayer, typedCommand } from "./Slash.js"
import { encodeRunResult, makeOutcome, summaryLine } from "./Summary.js"
import { canAnimate, isTerminal, paint } from "./Terminal.js"
import { summarizeInto, summarizes, TITLE_GRACE } from "./Titles.js"

const exitCodeFor = (status: RunStatus): number =>
  status === "completed"
    ? ExitCode.completed
    : status === "turns_exceeded"
      ? ExitCode.turnsExceeded
      : status === "cancelled" || status === "interrupted"
        ? ExitCode.cancelled
        : ExitCode.failed

const promptOnStdin = (words: ReadonlyArray<string>) =>
  (words.length === 1 && words[0] === "-") || (words.length === 0 && process.stdin.isTTY !== true)

/** The prompt from the arguments, or from stdin when it is `-` or piped with no arguments. */
const readPrompt = (words: ReadonlyArray<string>): Effect.Effect<string, CliError> => {
  if (!promptOnStdin(words)) {
    const prompt = words.join(" ").trim()
    return prompt === ""
      ? Effect.fail(
          usageError("No prompt: give the task as arguments, or pipe it on stdin (`echo task | alisio run`).")
        )
      : checkPromptSize(prompt)
  }
  return readAll().pipe(
    Effect.map((text) => text.trim()),
    Effect.filterOrFail(
      (prompt) => prompt !== "",
      () => usageError("No prompt: stdin was empty.")
    )
  )
}

/** The latest run of a session being resumed: its model is the session's until `-m` says otherwise. */
const lastRun = (sessionId: SessionId) =>
  Effect.flatMap(SessionStore, (store) =>
    store.runs === undefined
      ? Effect.succeed(Option.none<RunRecord>())
      : Effect.map(store.runs(sessionId), (runs) => Option.fromNullable(runs.at(-1)))
  )

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
        const closed = yield* Effect.forkScoped(Effect.zipLeft(BrokenPipe.stdoutClosed, Fiber.interrupt(running)))
        const exit = yield* Fiber.await(running).pipe(Effect.onInterrupt(() => Fiber.interrupt(running)))
        const loss = yield* Fiber.poll(closed)
        if (Exit.isFailure(exit) && Exit.isInterrupted(exit) && Option.isSome(loss) && Exit.isSuccess(loss.value)) {
          return yield* loss.value.value._tag === "closed"
            ? new CliError({
                message: "stdout was closed (broken pipe); the run was cancelled",
                exitCode: ExitCode.cancelled
              })
            : new CliError({
                message: `could not write to stdout (${loss.value.value.reason}); the run was cancelled`,
                exitCode: ExitCode.failed
              })
        }
        return yield* exit
      })
    )
})

/** What the run prints, and how it ends its output: the text or JSON mode, the outcome, the file. */
const makeOutput = (flags: RunFlags) => {
  const summary = !flags.json && !flags.quiet && isTerminal(process.stderr)
  const renderer = flags.json
    ? makeJsonWriter({ events: !flags.final })
    : makeTextRenderer({ quiet: flags.quiet, progress: summary && canAnimate(process.stderr), summary })
  const outcome = makeOutcome()
  const observe = (event: KnownRunEvent, now: number) => {
    outcome.observe(event)
    renderer.event(event, now)
  }
  /** An event read back from the store, shown as the run showed it live. */
  const replay = (event: KnownRunEvent) => {
    outcome.observe(event)
    renderer.stored(event, Date.parse(event.time))
  }
  /** After the run, however it ended: the answer file, the `--final` object, the summary line. */
  const finish = (status: RunStatus | undefined) =>
    Effect.gen(function* () {
      const result = outcome.result(status)
      if (result === undefined) return renderer.close()
      if (Option.isSome(flags.outputLastMessage)) yield* writeAtomically(flags.outputLastMessage.value, result.text)
      if (flags.json && flags.final) {
        renderer.close()
        process.stdout.write(jsonLine(encodeRunResult(result)))
        return
      }
      renderer.close(summary ? summaryLine(result, paint(process.stderr)) : undefined)
    })
  return { renderer, observe, replay, finish, progress: summary }
}

/** `alisio run`: one task, headless (CLI-1, CLI-2). */
export const runCommand = (flags: RunFlags) =>
  Effect.gen(function* () {
    if (flags.continue && Option.isSome(flags.session)) {
      return yield* usageError(
        "--continue and --session both choose the session to resume: give one of them (see alisio run --help)"
      )
    }
    if (flags.final && !flags.json) {
      return yield* usageError("--final goes with --json: write `alisio run --json --final …` (see alisio run --help)")
    }
    if (Option.isSome(flags.outputLastMessage)) yield* checkFolder(flags.outputLastMessage.value)
    const typed = yield* readPrompt(flags.prompt)
    const piped = promptOnStdin(flags.prompt) ? Option.none<string>() : yield* pipedInput()
    const slash = typedCommand(flags.prompt)
    const setup = yield* loadSetup({
      ...(Option.isSome(flags.cwd) ? { cwd: flags.cwd.value } : {}),
      trustProject: flags.trustProject,
      projectMcp: true,
      flags: { limits: limitsOf(flags) }
    })
    const output = makeOutput(flags)
    // How the run ended, when it is known without a terminal event (a followed run whose process died).
    let ended: RunStatus | undefined
    const program = Effect.gen(function* () {
      const store = yield* SessionStore
      if (store.interruptRuns !== undefined) yield* store.interruptRuns()
      const chosen = yield* chooseSession(setup, flags)
      let prompt = typed
      if (Option.isSome(slash)) {
        // `/name args` (CMD-1): a core command prints its text and the run ends here, without the
        // model; a template or skill becomes the prompt.
        const expanded = yield* runTypedCommand(
          setup,
          slash.value,
          prompt,
          Option.getOrUndefined(chosen.sessionId),
          flags
        ).pipe(
          Effect.provide(commandsLayer(setup)),
          Effect.catchTag("CliError", (error) =>
            Effect.fail(
              "nothingToContinue" in chosen
                ? new CliError({
                    exitCode: error.exitCode,
                    message: `no earlier session in this directory: ${error.message}`
                  })
                : error
            )
          )
        )
        if (Option.isNone(expanded)) return setExitCode(ExitCode.completed)
        prompt = expanded.value
      }
      // `@<server>:<uri>` resources (MCP-1), read before anything reaches the model or the store;
      // only the prompt's own mentions count, not the text piped under it.
      const attachments = yield* Effect.flatMap(McpServers, (servers) => mentionAttachments(servers, prompt)).pipe(
        Effect.mapError((error) => usageError(error.message))
      )
      // The whole prompt (a template's expansion, what was piped under it) must fit a model (CLI-1).
      prompt = yield* checkPromptSize(withPipedInput(prompt, piped))
      if ("nothingToContinue" in chosen) {
        process.stderr.write("alisio: no earlier session in this directory; starting a new one\n")
      }
      yield* registerProviders(setup)
      const resumed = Option.isSome(chosen.sessionId) ? yield* lastRun(chosen.sessionId.value) : Option.none()
      // What /model and /effort set for the session, unless -m says otherwise.
      const settings = Option.isSome(chosen.sessionId) ? yield* sessionSettings(store, chosen.sessionId.value) : {}
      const model = yield* chooseModel(
        setup,
        Option.orElse(flags.model, () => Option.fromNullable(settings.model)),
        resumed,
        flags.json || flags.quiet ? "quiet" : "run"
      )
      const context = yield* SystemContext
      const system = yield* context.build({
        sessionId: Option.getOrUndefined(chosen.sessionId),
        prompt,
        model: model.model
      })
      for (const notice of system.notices) process.stderr.write(`alisio: warning: ${notice}\n`)
      for (const diagnostic of context.skills.diagnostics) {
        process.stderr.write(`alisio: warning: ${formatDiagnostic(diagnostic)}\n`)
      }
      const replay = output.replay
      const requestId = Option.getOrElse(flags.requestId, () => "")
      const quietNotes = flags.json || flags.quiet
      if (Option.isSome(chosen.existing)) {
        ended = yield* followRun(chosen.existing.value, requestId, quietNotes, replay)
        return setExitCode(exitCodeFor(ended))
      }
      const runner = cancelledWhenStdoutCloses(yield* Runner)
      if (output.progress) yield* Effect.forkScoped(animate(output.renderer.tick))
      // A new session is titled after its prompt at once; the model's summary may follow (CLI-1).
      const title = Option.isNone(chosen.sessionId) ? fromPrompt(typed) : undefined
      const started = yield* Deferred.make<SessionId>()
      let sessionKnown = false
      const clock = yield* Effect.clock
      const summary =
        title !== undefined && summarizes(setup, model.provider)
          ? yield* Effect.forkScoped(summarizeInto({ setup, run: model, prompt, promptTitle: title, session: started }))
          : undefined
      const outcome = yield* runner.run({
        cwd: setup.cwd,
        ...(title === undefined ? {} : { title }),
        prompt,
        ...(attachments.length === 0 ? {} : { attachments }),
        model: model.model,
        provider: model.service,
        ...(Option.isSome(model.info) ? { modelInfo: model.info.value } : {}),
        system: system.text,
        ...(settings.effort === undefined ? {} : { effort: settings.effort }),
        readOnly: flags.readOnly,
        ...(flags.yes
          ? { approvals: approveAll }
          : setup.config.approvals === undefined
            ? {}
            : { approvals: setup.config.approvals }),
        ...(setup.config.limits === undefined ? {} : { limits: setup.config.limits }),
        ...(Option.isSome(chosen.sessionId) ? { sessionId: chosen.sessionId.value } : {}),
        ...(Option.isSome(flags.runId) ? { runId: RunId.make(flags.runId.value) } : {}),
        ...(Option.isSome(flags.requestId) ? { requestId: flags.requestId.value } : {}),
        ...(Option.isSome(flags.correlationId) ? { correlationId: flags.correlationId.value } : {}),
        // Once per event, deltas included: one effect, the clock read in it; the session is told once.
        onEvent: (event) =>
          Effect.suspend(() => {
            output.observe(event, clock.unsafeCurrentTimeMillis())
            if (sessionKnown) return Effect.void
            sessionKnown = true
            return Effect.asVoid(Deferred.succeed(started, event.sessionId))
          })
      })
      ended = outcome.status
      // The run is over and its answer printed; a title still on its way gets a moment, no more.
      if (summary !== undefined) yield* Effect.ignore(Effect.timeout(Fiber.join(summary), TITLE_GRACE))
      if (!outcome.existing) return setExitCode(exitCodeFor(outcome.status))
      // The request already had a run (here, or claimed by a process that raced this one).
      const runs = store.runs === undefined ? [] : yield* store.runs(outcome.sessionId)
      const run = runs.find((r) => r.id === outcome.runId)
      if (run === undefined) {
        // A store without run records: replay what it stored of the run.
        for (const event of yield* store.events(outcome.sessionId, outcome.runId, { onUnreadable: reportUnreadable }))
          replay(event)
        return setExitCode(exitCodeFor(outcome.status))
      }
      ended = yield* followRun(run, requestId, quietNotes, replay)
      setExitCode(exitCodeFor(ended))
    })
    yield* program.pipe(
      Effect.scoped,
      // The output ends however the run did: completed, failed, or cancelled by Ctrl-C. A file
      // that cannot be written is one line, and a failure of the command.
      Effect.onExit(() =>
        Effect.catchAll(output.finish(ended), (error) =>
          Effect.sync(() => {
            process.stderr.write(`alisio: ${error.message}\n`)
            setExitCode(error.exitCode)
          })
        )
      ),
      Effect.catchTags({
        SessionLockedError: (error) => Effect.fail(usageError(error.message)),
        SessionNotFoundError: (error) => Effect.fail(usageError(error.message)),
        PromptTooLargeError: (error) => Effect.fail(usageError(error.message)),
        StoreError: (error) => Effect.fail(new CliError({ message: error.message, exitCode: ExitCode.failed }))
      }),
      Effect.provide(
        systemContextLayer(setup, flags.trustProject).pipe(
          Layer.provideMerge(
            runtimeLayer(setup, { approveAll: flags.yes, plugins: pluginFlagsOf(flags), quiet: flags.quiet })
          )
        )
      )
    )
  })
