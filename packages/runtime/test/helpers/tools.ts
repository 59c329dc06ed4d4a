// Test tools: small, real tools with each effect, for tests and benchmarks (no test-runner imports).

import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** `echo`: returns its text (read). */
export const echoTool: Tool = defineTool({
  name: "echo",
  description: "Returns the text it is given.",
  effect: "read",
  input: Schema.Struct({ text: Schema.String }),
  run: ({ text }) => Effect.succeed(textResult(`echo: ${text}`))
})

/** `note`: pretends to write (write effect, so it needs approval). */
export const noteTool: Tool = defineTool({
  name: "note",
  description: "Writes a note.",
  effect: "write",
  input: Schema.Struct({ text: Schema.String }),
  run: ({ text }) => Effect.succeed(textResult(`noted: ${text}`))
})

/** `sleep`: sleeps `ms` of clock time, streaming progress first. */
export const sleepTool: Tool = defineTool({
  name: "sleep",
  description: "Sleeps.",
  effect: "read",
  input: Schema.Struct({ ms: Schema.Number }),
  run: ({ ms }, context) =>
    context.progress("sleeping\n").pipe(Effect.zipRight(Effect.sleep(ms)), Effect.as(textResult(`slept ${ms}`)))
})

export const testTools: ReadonlyArray<Tool> = [echoTool, noteTool, sleepTool]
