// What an imported module must hold to be a plugin, and how a failure is told in one line.

import { type PluginDefinition, pluginIdPattern } from "@alisio/domain/Plugin"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/** The plugin a module exports: its default export, or a named `plugin`. */
export const definitionOf = (module: unknown, where: string): Either.Either<PluginDefinition, string> => {
  const exported =
    typeof module === "object" && module !== null
      ? ((module as { default?: unknown }).default ?? (module as { plugin?: unknown }).plugin)
      : undefined
  return validateDefinition(exported, where)
}

export const validateDefinition = (value: unknown, where: string): Either.Either<PluginDefinition, string> => {
  if (typeof value !== "object" || value === null) {
    return Either.left(`${where} exports no plugin: export default definePlugin({ id, version, setup })`)
  }
  const { id, setup, version } = value as Partial<PluginDefinition>
  if (typeof id !== "string" || !pluginIdPattern.test(id)) {
    return Either.left(
      `${where}: the plugin id ${JSON.stringify(id)} is not valid: use lower-case letters, digits, "-" and "_" (at most 64)`
    )
  }
  if (typeof version !== "string" || version === "") {
    return Either.left(`${where}: the plugin ${id} has no version`)
  }
  if (!Effect.isEffect(setup)) {
    return Either.left(`${where}: the setup of the plugin ${id} is not an Effect`)
  }
  return Either.right(value as PluginDefinition)
}

// The host's own errors already read as sentences; a plugin's own errors are named by their tag.
const plainTags = new Set(["Error", "PluginError", "ToolError"])

/**
 * The readable message of any value a plugin threw or failed with; reading it never throws, even
 * for a getter that throws or an object with no prototype.
 */
export const messageOf = (error: unknown): string => {
  try {
    return readMessage(error)
  } catch {
    return `an unreadable ${typeof error} (reading its message threw)`
  }
}

const readMessage = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const { _tag, message } = error as { _tag?: unknown; message?: unknown }
    if (typeof message === "string" && message !== "") {
      return typeof _tag === "string" && !plainTags.has(_tag) && !message.startsWith(_tag)
        ? `${_tag}: ${message}`
        : message
    }
    if (typeof _tag === "string") return _tag
  }
  if (typeof error === "string") return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}

/** One line for a cause: its first failure or defect, or that it was interrupted. */
export const causeMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return messageOf(failure.value)
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) return messageOf(defect.value)
  return Cause.isInterruptedOnly(cause) ? "it was interrupted" : Cause.pretty(cause).split("\n")[0]!
}
