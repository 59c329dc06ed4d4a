// A plugin's tool as the host runs it (PL-6).

import { ToolError } from "@alisio/domain/Errors"
import type { Tool } from "@alisio/domain/Tool"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CurrentRun } from "../../CurrentRun.js"
import { causeMessage, messageOf } from "./definition.js"
import { diagnose, type HostInternals, type PluginRecord } from "./host.js"

/** An error a tool failed with, as the model will read it. */
const asToolError = (toolName: string, error: unknown): ToolError => {
  if (Schema.is(ToolError)(error)) return error
  // The plugin's own Schema.TaggedError (one Effect runtime: its classes are the host's).
  if (error instanceof Cause.YieldableError) return new ToolError({ message: messageOf(error) })
  return new ToolError({ message: `The tool ${toolName} failed: ${messageOf(error)}` })
}

/**
 * A plugin's tool as the host runs it: a typed failure reaches the model as a `ToolError`; a
 * defect (a crash, a throw, something not an Effect) also becomes a diagnostic and a
 * `plugin_failed` event of the run (PL-6).
 */
export const guardTool = (
  host: HostInternals,
  record: PluginRecord,
  tool: Tool<never, unknown>,
  publicName: string
): Tool => ({
  ...tool,
  execute: (args, context) =>
    Effect.suspend(() => {
      const result: unknown = tool.execute(args, context)
      return Effect.isEffect(result)
        ? (result as ReturnType<Tool<never, unknown>["execute"]>)
        : Effect.dieMessage(`its handler returned ${typeof result}, not an Effect`)
    }).pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) return Effect.fail(asToolError(tool.name, failure.value))
        const message = `The tool ${tool.name} of the plugin ${record.id} crashed: ${causeMessage(cause)}`
        return Effect.gen(function* () {
          yield* diagnose(host, record, "tool", message)
          const run = yield* Effect.serviceOption(CurrentRun)
          if (Option.isSome(run)) {
            yield* run.value.events
              .emit("plugin_failed", { pluginId: record.id, stage: "tool", message, tool: publicName })
              .pipe(Effect.ignore)
          }
          return yield* new ToolError({ message })
        })
      })
    )
})
