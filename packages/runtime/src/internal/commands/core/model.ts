// The session's model and reasoning effort: shown, or set for its next runs (kept in the store).

import type { CommandOutput } from "@alisio/domain/Command"
import { ReasoningEffort } from "@alisio/domain/LanguageModel"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Providers } from "../../../Providers.js"
import { SessionStore } from "../../../SessionStore.js"
import type { CoreCommand, CoreInvocation } from "../entry.js"
import { readSettings, updateSettings } from "../sessionSettings.js"
import { failed, requireSession, shortId, storeFailure, text, usage } from "./shared.js"

const resetWords = new Set(["default", "reset", "auto"])

/** The model the session's next run takes when nobody says otherwise, and why. */
const currentModel = (invocation: CoreInvocation) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    if (invocation.sessionId === undefined) {
      return invocation.defaultModel === undefined
        ? "No session yet, and no default model is configured (`alisio models use` sets one)."
        : `No session yet; new sessions run with ${invocation.defaultModel} (the default model).`
    }
    const session = yield* requireSession(invocation)
    const settings = yield* Effect.mapError(readSettings(store, session.id), storeFailure(invocation.name))
    if (settings.model !== undefined)
      return `Session ${shortId(session.id)} runs with ${settings.model} (set with /model).`
    const runs =
      store.runs === undefined ? [] : yield* Effect.mapError(store.runs(session.id), storeFailure(invocation.name))
    const last = runs.at(-1)
    if (last !== undefined)
      return `Session ${shortId(session.id)} runs with ${last.provider}/${last.model} (its last run's).`
    return invocation.defaultModel === undefined
      ? `Session ${shortId(session.id)} has not run yet; no default model is configured.`
      : `Session ${shortId(session.id)} has not run yet; it will run with ${invocation.defaultModel} (the default model).`
  })

export const model: CoreCommand = {
  name: "model",
  description: "Show the session's model, or set the one its next runs use (default: back to the usual)",
  argumentHint: "[provider/model]",
  run: (invocation) =>
    Effect.gen(function* () {
      if (invocation.args === "") return text(yield* currentModel(invocation))
      const session = yield* requireSession(invocation)
      const store = yield* SessionStore
      const save = (model: string | undefined) =>
        Effect.mapError(updateSettings(store, session.id, { model }), storeFailure(invocation.name))
      if (resetWords.has(invocation.args)) {
        yield* save(undefined)
        return text(`Session ${shortId(session.id)} goes back to its last run's model, or the default.`)
      }
      const providers = yield* Effect.serviceOption(Providers)
      let chosen = invocation.args
      if (Option.isSome(providers)) {
        const resolved = yield* providers.value.activate(invocation.args, session.id).pipe(
          Effect.catchTags({
            UnknownModelError: (error) => Effect.fail(usage(invocation.name, error.message)),
            ProviderError: (error) =>
              Effect.fail(failed(invocation.name, `Could not list the models: ${error.message}`))
          })
        )
        chosen = `${resolved.provider}/${resolved.model}`
      } else if (!/^[^/\s]+\/\S+$/.test(chosen)) {
        return yield* Effect.fail(usage(invocation.name, `Write the model as provider/model, e.g. openai/gpt-4.1.`))
      }
      yield* save(chosen)
      return text(`Session ${shortId(session.id)} now runs with ${chosen}.`)
    })
}

const levels = ReasoningEffort.literals
const isLevel = onFirstCall(() => Schema.is(ReasoningEffort))

export const effort: CoreCommand = {
  name: "effort",
  description: `Show the session's reasoning effort, or set it for its next runs (${levels.join(", ")} or default)`,
  argumentHint: "[level]",
  run: (invocation) =>
    Effect.gen(function* () {
      const session = yield* requireSession(invocation)
      const store = yield* SessionStore
      const wanted = invocation.args.toLowerCase()
      if (wanted === "") {
        const settings = yield* Effect.mapError(readSettings(store, session.id), storeFailure(invocation.name))
        return text(
          settings.effort === undefined
            ? `Session ${shortId(session.id)} uses the model's default reasoning effort.`
            : `Session ${shortId(session.id)} runs with reasoning effort ${settings.effort}.`
        )
      }
      if (!resetWords.has(wanted) && !isLevel(wanted)) {
        return yield* Effect.fail(
          usage(invocation.name, `"${invocation.args}" is not an effort: give ${levels.join(", ")} or default.`)
        )
      }
      const chosen = isLevel(wanted) ? wanted : undefined
      yield* Effect.mapError(updateSettings(store, session.id, { effort: chosen }), storeFailure(invocation.name))
      return text(
        chosen === undefined
          ? `Session ${shortId(session.id)} goes back to the model's default reasoning effort.`
          : `Session ${shortId(session.id)} now runs with reasoning effort ${chosen}.`
      ) satisfies CommandOutput
    })
}
