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
import { diagnose, type HostInternals } from "./host.js"
import type { Lifecycle } from "./lifecycle.js"

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

/** Every context provider at once, each within `contextMs`: the text each plugin adds, in load order. */
export const contextSections = (host: HostInternals, lifecycle: Lifecycle) => (input: ContextInput) =>
  Effect.gen(function* () {
    const providers = yield* Ref.get(host.contexts)
    const sections = yield* Effect.forEach(
      providers,
      ({ pluginId, provider }) =>
        Effect.suspend(() => provider(input)).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(host.timeouts.contextMs),
            onTimeout: () => new PluginError({ pluginId, message: `took longer than ${host.timeouts.contextMs} ms` })
          }),
          Effect.map((text) => {
            if (typeof text !== "string" || text.trim() === "") return undefined
            const body = text.length > CONTEXT_CHARS ? `${text.slice(0, CONTEXT_CHARS)}…` : text
            return { pluginId, text: body.trim() }
          }),
          Effect.catchAllCause((cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
            const message = `its context provider failed: ${causeMessage(cause)}`
            return Effect.as(report(host, lifecycle, pluginId, "context", message), undefined)
          })
        ),
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
      return yield* Effect.suspend(() => {
        const result: unknown = command.execute(args, context)
        return Effect.isEffect(result)
          ? (result as Effect.Effect<unknown, unknown>)
          : Effect.die(new Error(`its execute returned ${shapeOf(result)}, not an Effect`))
      }).pipe(
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
