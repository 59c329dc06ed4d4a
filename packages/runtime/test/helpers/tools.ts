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

/** `ping`: every parameter optional, so `{}` would run it; counts its runs. Not in `testTools`. */
export const pingTool = () => {
  let runs = 0
  const tool: Tool = defineTool({
    name: "ping",
    description: "Pings; every parameter is optional.",
    effect: "read",
    input: Schema.Struct({ note: Schema.optional(Schema.String) }),
    run: () =>
      Effect.sync(() => {
        runs += 1
        return textResult("pong")
      })
  })
  return { tool, runs: () => runs }
}

/** `peek`: reads a path outside the workspace, so it asks for an external-directory approval. */
export const peekTool: Tool = defineTool({
  name: "peek",
  description: "Looks at a path outside the workspace.",
  effect: "read",
  input: Schema.Struct({ path: Schema.String }),
  run: ({ path }, context) => Effect.as(context.approveExternalPath(path), textResult(`peeked at ${path}`))
})
