// What plugins contribute to a run and to the surfaces: context for the system prompt (CTX-2) and
// slash commands, each bounded and reported when it fails (PL-6).

import type { PluginCommandContext } from "@alisio/domain/Command"
import { type ContextInput, PluginError } from "@alisio/domain/Plugin"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { sanitizeLines } from "../terminalText.js"
import { causeMessage } from "./definition.js"
import { diagnose, type HostInternals, type RegisteredContext } from "./host.js"
import type { Lifecycle } from "./lifecycle.js"
import { asPluginCode } from "./pluginCode.js"

/** Text a context provider may add to the system prompt; the rest is cut. */
const CONTEXT_CHARS = 16_000

/** Reports a failure of a plugin's contribution under the plugin, when it is still loaded. */
const report = (
  host: HostInternals,
  lifecycle: Lifecycle,
  pluginId: string,
  stage: "context" | "command",
  message: string
) => {
  const entry = lifecycle.loadedEntry(pluginId)
  return entry === undefined ? host.report({ pluginId, stage, message }) : diagnose(host, entry.record, stage, message)
}

/** What a provider gave when it was not text, in a few words ("a number", "a Promise of an object"). */
const kindOf = (value: unknown): string => {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return "a list"
  const type = typeof value
  return type === "object" ? "an object" : `a ${type}`
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

/** A provider's Effect, or a Promise it returned (awaited), as what it gives and how to name it. */
const provided = (
  value: unknown
): Effect.Effect<{ readonly value: unknown; readonly kind: string; readonly nothing?: boolean }, unknown> => {
  if (Effect.isEffect(value)) {
    // An Effect of undefined is the documented "nothing".
    return Effect.map(value as Effect.Effect<unknown, unknown>, (inner) => ({
      value: inner,
      kind: `an Effect of ${kindOf(inner)}`,
      nothing: inner === undefined
    }))
  }
  if (isThenable(value)) {
    return Effect.map(Effect.tryPromise({ try: async () => await value, catch: (error) => error }), (inner) => ({
      value: inner,
      kind: `a Promise of ${kindOf(inner)}`
    }))
  }
  return Effect.succeed({ value, kind: kindOf(value) })
}

/** Providers already warned about giving something other than text: once each, not every run. */
const warnedNotText = new WeakSet<RegisteredContext>()

/** Every context provider at once, each within `contextMs`: the text each plugin adds, in load order. */
export const contextSections = (host: HostInternals, lifecycle: Lifecycle) => (input: ContextInput) =>
  Effect.gen(function* () {
    const providers = yield* Ref.get(host.contexts)
    const sections = yield* Effect.forEach(
      providers,
      (registered) => {
        const { pluginId, provider } = registered
        const builtin = lifecycle.loadedEntry(pluginId)?.record.builtin ?? false
        return asPluginCode(
          builtin,
          Effect.suspend(() => provided(provider(input)))
        ).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(host.timeouts.contextMs),
            onTimeout: () => new PluginError({ pluginId, message: `took longer than ${host.timeouts.contextMs} ms` })
          }),
          Effect.flatMap(({ kind, nothing, value }) => {
            if (typeof value !== "string" && !nothing && !warnedNotText.has(registered)) {
              warnedNotText.add(registered)
              const message = `its context provider returned ${kind}, not a string; its context is left out`
              return Effect.as(report(host, lifecycle, pluginId, "context", message), undefined)
            }
            if (typeof value !== "string" || value.trim() === "") return Effect.succeed(undefined)
            const body = value.length > CONTEXT_CHARS ? `${value.slice(0, CONTEXT_CHARS)}…` : value
            return Effect.succeed({ pluginId, text: body.trim() })
          }),
          Effect.catchAllCause((cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
            const message = `its context provider failed: ${causeMessage(cause)}`
            return Effect.as(report(host, lifecycle, pluginId, "context", message), undefined)
          })
        )
      },
      { concurrency: "unbounded" }
    )
    return sections.filter((section) => section !== undefined)
  })

/** One plugin's context as the system prompt holds it: under the name of its plugin. */
export const contextSection = (section: { readonly pluginId: string; readonly text: string }): string =>
  `Context from the plugin ${section.pluginId}:\n${section.text}`

/** Every context provider's text, joined under the name of its plugin. */
export const contextFor = (host: HostInternals, lifecycle: Lifecycle) => (input: ContextInput) =>
  Effect.map(contextSections(host, lifecycle)(input), (sections) => sections.map(contextSection).join("\n\n"))

const shapeOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : typeof value

/** Runs a plugin command; a failure is a `PluginError`, a crash also a diagnostic. */
export const runCommand =
  (host: HostInternals, lifecycle: Lifecycle) => (name: string, args: string, context: PluginCommandContext) =>
    Effect.gen(function* () {
      const registered = (yield* Ref.get(host.commands)).get(name)
      if (registered === undefined) {
        return yield* new PluginError({ pluginId: "host", message: `No plugin command named "${name}".` })
      }
      const { command, pluginId } = registered
      const builtin = lifecycle.loadedEntry(pluginId)?.record.builtin ?? false
      return yield* asPluginCode(
        builtin,
        Effect.suspend(() => {
          const result: unknown = command.execute(args, context)
          return Effect.isEffect(result)
            ? (result as Effect.Effect<unknown, unknown>)
            : Effect.die(new Error(`its execute returned ${shapeOf(result)}, not an Effect`))
        })
      ).pipe(
        Effect.flatMap((output) =>
          typeof output === "string"
            ? // What a surface prints as it is: no escape sequence of a plugin reaches the terminal.
              Effect.succeed(sanitizeLines(output).join("\n"))
            : Effect.die(new Error(`it returned ${shapeOf(output)}, not a string`))
        ),
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
          const message = `The command ${name} failed: ${causeMessage(cause)}`
          const reported = Cause.isFailure(cause) ? Effect.void : report(host, lifecycle, pluginId, "command", message)
          return Effect.zipRight(reported, Effect.fail(new PluginError({ pluginId, message })))
        })
      )
    })
