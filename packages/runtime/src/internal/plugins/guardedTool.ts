// A plugin's tool as the host runs it (PL-6).

import { ToolError } from "@alisio/domain/Errors"
import { ToolResultContent } from "@alisio/domain/Message"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import type { Tool, ToolResult } from "@alisio/domain/Tool"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CurrentRun } from "../../CurrentRun.js"
import { boundedMessage, boundedResult, MAX_RESULT_CHARS } from "../resultBounds.js"
import { causeMessage, messageOf } from "./definition.js"
import { diagnose, type HostInternals, type PluginRecord } from "./host.js"
import { asPluginCode } from "./pluginCode.js"

/** An error a tool failed with, as the model will read it. */
const asToolError = (toolName: string, error: unknown): ToolError => {
  if (Schema.is(ToolError)(error)) {
    return error.message.length <= MAX_RESULT_CHARS ? error : new ToolError({ message: boundedMessage(error.message) })
  }
  // The plugin's own Schema.TaggedError (one Effect runtime: its classes are the host's).
  if (error instanceof Cause.YieldableError) return new ToolError({ message: boundedMessage(messageOf(error)) })
  return new ToolError({ message: boundedMessage(`The tool ${toolName} failed: ${messageOf(error)}`) })
}

/** What a crash's diagnostic, event and tool error say of it: a line, not the plugin's megabytes. */
const CRASH_CHARS = 2_000

const isToolResult: (value: unknown) => value is ToolResult = onFirstCall(() =>
  Schema.is(
    Schema.Struct({
      content: Schema.Array(ToolResultContent),
      isError: Schema.optionalWith(Schema.Boolean, { exact: true })
    })
  )
)

/** What a handler's Effect succeeded with, when it is not a `ToolResult`: a defect of the plugin. */
const checkedResult = (result: unknown): Effect.Effect<ToolResult> =>
  isToolResult(result)
    ? Effect.succeed(boundedResult(result))
    : Effect.die(
        new Error(
          `its result is not a ToolResult ({ content: [{ _tag: "text", text }] }; textResult(text) builds one): got ${shapeOf(result)}`
        )
      )

const shapeOf = (value: unknown): string => {
  try {
    return JSON.stringify(value)?.slice(0, 120) ?? typeof value
  } catch {
    return typeof value
  }
}

/**
 * A plugin's tool as the host runs it: a typed failure reaches the model as a `ToolError`; a
 * defect (a crash, a throw, something not an Effect or not a `ToolResult`) also becomes a
 * diagnostic and a `plugin_failed` event of the run (PL-6). A result is bounded as MCP results
 * are: a plugin's 30 MB of text does not fill the context.
 */
export const guardTool = (
  host: HostInternals,
  record: PluginRecord,
  tool: Tool<never, unknown>,
  publicName: string
): Tool => ({
  ...tool,
  execute: (args, context) =>
    asPluginCode(
      record.builtin,
      Effect.suspend(() => {
        const result: unknown = tool.execute(args, context)
        return Effect.isEffect(result)
          ? (result as ReturnType<Tool<never, unknown>["execute"]>)
          : Effect.die(new Error(`its handler returned ${typeof result}, not an Effect`))
      })
    ).pipe(
      Effect.flatMap(checkedResult),
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) return Effect.fail(asToolError(tool.name, failure.value))
        const message = boundedMessage(
          `The tool ${tool.name} of the plugin ${record.id} crashed: ${causeMessage(cause)}`,
          CRASH_CHARS
        )
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
