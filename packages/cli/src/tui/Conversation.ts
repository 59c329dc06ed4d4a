// The conversation as the UI drives it: one run at a time, forked so the screen stays live; the
// messages typed meanwhile queue and go out when it ends; Esc or Ctrl-C interrupts it (the runner
// records run_cancelled and stops its children); commands go through the catalog. Everything the
// screen asks for arrives as an intent on one queue, handled in order by one fiber.
import { parseSlashCommand } from "@alisio/domain/Command"
import type { SessionId } from "@alisio/domain/Ids"
import type { Limits } from "@alisio/domain/Limits"
import { CommandCatalog, sessionSettings } from "@alisio/runtime/CommandCatalog"
import { McpServers, mentionAttachments } from "@alisio/runtime/McpServers"
import type { Providers, ResolvedModel } from "@alisio/runtime/Providers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { fromPrompt } from "@alisio/runtime/SessionTitles"
import { SystemContext } from "@alisio/runtime/SystemContext"
import { approveAll } from "@alisio/runtime/Tools"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberHandle from "effect/FiberHandle"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type { Setup } from "../App.js"
import { ExitCode } from "../CliError.js"
import { chooseModel } from "../ModelChoice.js"
import { shortId } from "../ShortIds.js"
import { runCommand } from "./Commands.js"
import type { UserEntry } from "./Entries.js"
import type { Grants } from "./Grants.js"
import type { History } from "./History.js"
import type { RunView } from "./RunView.js"
import type { Screen } from "./Screen.js"

/** The editor folds a paste past these into a marker. */
const LONG_DRAFT_CHARS = 1_000
const LONG_DRAFT_LINES = 10
const PASTE_START = "\x1b[200~"
const PASTE_END = "\x1b[201~"

const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`

export type Intent =
  | { readonly _tag: "Submit"; readonly text: string }
  | { readonly _tag: "Cancel" }
  | { readonly _tag: "Exit" }
  | { readonly _tag: "Ended" }
  | { readonly _tag: "Switch"; readonly sessionId: SessionId | undefined; readonly note?: string | undefined }

export interface ConversationOptions {
  readonly setup: Setup
  readonly screen: Screen
  readonly view: RunView
  readonly grants: Grants
  readonly history: History
  readonly intents: Queue.Queue<Intent>
  readonly readOnly: boolean
  readonly yes: boolean
  readonly limits: Limits
  readonly model: Option.Option<string>
}

/** What the conversation holds between intents. */
export interface ConversationState {
  sessionId: SessionId | undefined
  model: ResolvedModel | undefined
  /** `-m`, or what /model chose before the session existed. */
  modelFlag: Option.Option<string>
  busy: boolean
  readonly queued: Array<{ readonly text: string; readonly entry: UserEntry }>
}

export const makeConversation = (options: ConversationOptions) =>
  Effect.gen(function* () {
    const { screen, view, setup } = options
    const runner = yield* Runner
    const store = yield* SessionStore
    const catalog = yield* CommandCatalog
    const context = yield* SystemContext
    const mcp = yield* McpServers
    const handle = yield* FiberHandle.make()
    const services = yield* Effect.context<Providers>()
    const state: ConversationState = {
      sessionId: undefined,
      model: undefined,
      modelFlag: options.model,
      busy: false,
      queued: []
    }
    const offer = (intent: Intent) => Queue.offer(options.intents, intent)

    const setBusy = (busy: boolean) => {
      state.busy = busy
      screen.status.update((s) => {
        s.queued = state.queued.length
        if (!busy) s.activity = { _tag: "Idle" }
      })
      screen.tui.requestRender()
    }

    /** The model of the next run: -m or /model, the session's setting or last run, the default. */
    const resolveModel = Effect.gen(function* () {
      const settings = state.sessionId === undefined ? {} : yield* sessionSettings(store, state.sessionId)
      const runs = state.sessionId === undefined || store.runs === undefined ? [] : yield* store.runs(state.sessionId)
      const flag = Option.orElse(state.modelFlag, () => Option.fromNullable(settings.model))
      const model = yield* Effect.provide(chooseModel(setup, flag, Option.fromNullable(runs.at(-1)), "ui"), services)
      state.model = model
      screen.status.update((s) => {
        s.model = `${model.provider}/${model.model}`
        s.contextWindow = Option.getOrUndefined(model.info)?.contextWindow
      })
      return { model, effort: settings.effort }
    })

    /** Shows a session: its stored conversation, its totals; the next runs go on in it. */
    const switchTo = (sessionId: SessionId | undefined) =>
      Effect.gen(function* () {
        // Read first: a session that cannot be read leaves the current one on the screen and in use.
        const stored = sessionId === undefined ? [] : yield* store.messages(sessionId)
        const runs = sessionId === undefined || store.runs === undefined ? [] : yield* store.runs(sessionId)
        state.sessionId = sessionId
        options.grants.switchTo(sessionId)
        screen.clearTranscript()
        let inputTokens = 0
        let outputTokens = 0
        if (sessionId !== undefined) {
          view.replay(stored, runs)
          for (const run of runs) {
            inputTokens += run.usage?.inputTokens ?? 0
            outputTokens += run.usage?.outputTokens ?? 0
          }
        }
        screen.status.update((s) => {
          s.session = sessionId === undefined ? undefined : shortId(sessionId)
          s.turns = 0
          s.inputTokens = inputTokens
          s.outputTokens = outputTokens
          s.contextTokens = undefined
          s.activeMs = 0
        })
        // A model that cannot be used is said now, not only when the first message fails.
        yield* Effect.catchAll(resolveModel, (error) =>
          Effect.sync(() => {
            const unknown = "exitCode" in error && error.exitCode === ExitCode.usage
            screen.notice(`${error.message}${unknown ? " /model <name> chooses another." : ""}`, "warning")
          })
        )
      })

    /**
     * The draft back in the editor, before what was typed meanwhile: a message that could not go.
     * A long one goes back as a paste marker, as it came: set as text, the editor would lay out
     * hundreds of kilobytes on every key.
     */
    const restoreDraft = (text: string) => {
      const draft = screen.editor.getExpandedText()
      const restored = draft === "" ? text : `${text}\n${draft}`
      if (restored.length <= LONG_DRAFT_CHARS && restored.split("\n").length <= LONG_DRAFT_LINES) {
        screen.editor.setText(restored)
        return
      }
      screen.editor.setText("")
      screen.editor.handleInput(`${PASTE_START}${restored}${PASTE_END}`)
    }

    const run = (prompt: string) =>
      Effect.gen(function* () {
        // `@<server>:<uri>` resources (MCP-1) are read first: one that cannot be read keeps the draft.
        const attachments = yield* mentionAttachments(mcp, prompt).pipe(
          Effect.tapError(() => Effect.sync(() => restoreDraft(prompt)))
        )
        const sent = view.user(prompt)
        // Refused before anything was stored: not sent after all, the message goes back to the editor.
        const refused = Effect.sync(() => {
          view.unsend(sent)
          restoreDraft(prompt)
        })
        // A model that cannot be used (or a context that cannot be built) keeps the message to send again.
        const { chosen, system } = yield* Effect.gen(function* () {
          const chosen = yield* resolveModel
          const system = yield* context.build({ sessionId: state.sessionId, prompt, model: chosen.model.model })
          return { chosen, system }
        }).pipe(Effect.tapError(() => refused))
        for (const notice of system.notices) screen.notice(notice, "warning")
        const started = yield* Clock.currentTimeMillis
        screen.status.update((s) => {
          s.activity = { _tag: "Starting" }
          s.activeMs = 0
          s.turns = 0
          s.hint = undefined
        })
        const outcome = yield* runner
          .run({
            cwd: setup.cwd,
            ...(state.sessionId === undefined ? { title: fromPrompt(prompt) } : { sessionId: state.sessionId }),
            prompt,
            ...(attachments.length === 0 ? {} : { attachments }),
            model: chosen.model.model,
            provider: chosen.model.service,
            ...(Option.isSome(chosen.model.info) ? { modelInfo: chosen.model.info.value } : {}),
            system: system.text,
            ...(chosen.effort === undefined ? {} : { effort: chosen.effort }),
            readOnly: options.readOnly,
            ...(options.yes
              ? { approvals: approveAll }
              : setup.config.approvals === undefined
                ? {}
                : { approvals: setup.config.approvals }),
            limits: { ...setup.config.limits, ...options.limits },
            onEvent: (event) =>
              Effect.sync(() => {
                if (event.type === "run_started" && state.sessionId === undefined) {
                  state.sessionId = event.sessionId
                  options.grants.adopt(event.sessionId)
                  screen.status.update((s) => {
                    s.session = shortId(event.sessionId)
                  })
                }
                view.apply(event)
              })
          })
          .pipe(
            // Refused before anything was stored (CTX-1): the message goes back to the editor to shorten.
            Effect.tapErrorTag("PromptTooLargeError", () => refused)
          )
        const ended = yield* Clock.currentTimeMillis
        if (outcome.status === "completed" && outcome.text === "" && outcome.turns === 0) {
          screen.notice(`The run ended after ${ended - started} ms with nothing to show.`)
        }
      }).pipe(
        Effect.catchAll((error) =>
          Effect.sync(() =>
            screen.notice(
              error._tag === "PromptTooLargeError" ? sentence(error.message) : error.message,
              error._tag === "SessionLockedError" ? "warning" : "error"
            )
          )
        )
      )

    /** Starts work in the background; the loop hears `Ended` when it is over, however it ended. */
    const startBusy = <E, R>(work: Effect.Effect<void, E, R>) =>
      Effect.gen(function* () {
        setBusy(true)
        yield* FiberHandle.run(
          handle,
          work.pipe(
            Effect.catchAllCause((cause) =>
              Effect.sync(() => {
                if (!Cause.isInterruptedOnly(cause)) screen.notice(Cause.pretty(cause), "error")
              })
            ),
            Effect.ensuring(offer({ _tag: "Ended" }))
          )
        )
      })

    /**
     * The command `text` types, if it types one: `/Upper` is `/upper` when there is such a command,
     * else a prompt (CMD-1). The catalog looks at the template folders again for a name it does not know.
     */
    const typedCommand = (text: string) =>
      Effect.gen(function* () {
        const slash = parseSlashCommand(text)
        if (Option.isNone(slash) || slash.value.folded !== true) return slash
        const known = yield* Effect.either(catalog.resolve(slash.value.name, "tui"))
        return Either.isLeft(known) && known.left.reason === "unknown" ? Option.none() : slash
      })

    const send = (text: string) =>
      Effect.gen(function* () {
        options.history.add(text)
        const slash = yield* typedCommand(text)
        if (Option.isSome(slash)) {
          view.user(text)
          const { name, args } = slash.value
          yield* startBusy(
            runCommand({
              name,
              args,
              catalog,
              store,
              screen,
              view,
              state,
              setup,
              offer: (intent) => Queue.unsafeOffer(options.intents, intent),
              send: (prompt) => Queue.unsafeOffer(options.intents, { _tag: "Submit", text: ` ${prompt}` }),
              resolveModel,
              services
            })
          )
          return
        }
        yield* startBusy(run(text.replace(/^ /, "")))
      })

    const handleIntent = (intent: Intent): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        switch (intent._tag) {
          case "Submit": {
            if (intent.text.trim() === "") return true
            if (state.busy) {
              const entry = screen.queue(intent.text)
              state.queued.push({ text: intent.text, entry })
              screen.status.update((s) => {
                s.queued = state.queued.length
              })
              return true
            }
            yield* send(intent.text)
            return true
          }
          case "Cancel": {
            if (!state.busy) return true
            // What was queued goes back to the editor, to send again or change, as the run it followed stops.
            if (state.queued.length > 0) {
              const texts = state.queued.splice(0).map((queued) => {
                screen.unqueue(queued.entry)
                return queued.text
              })
              const draft = screen.editor.getText()
              screen.editor.setText([...texts, ...(draft === "" ? [] : [draft])].join("\n"))
            }
            screen.status.update((s) => {
              s.activity = { _tag: "Cancelling" }
            })
            screen.tui.requestRender()
            // Interrupting returns once the run's finalizer recorded run_cancelled and stopped its children.
            yield* FiberHandle.clear(handle)
            return true
          }
          case "Ended": {
            setBusy(false)
            const next = state.queued.shift()
            if (next !== undefined) {
              screen.unqueue(next.entry)
              screen.status.update((s) => {
                s.queued = state.queued.length
              })
              yield* send(next.text)
            }
            return true
          }
          case "Switch": {
            const switched = yield* Effect.either(switchTo(intent.sessionId))
            if (switched._tag === "Left")
              screen.notice(`The session could not be opened: ${switched.left.message}`, "error")
            else if (intent.note !== undefined) screen.notice(intent.note, "command")
            return true
          }
          case "Exit": {
            state.queued.length = 0
            yield* FiberHandle.clear(handle)
            return false
          }
        }
      })

    return { state, switchTo, handleIntent, resolveModel }
  })
