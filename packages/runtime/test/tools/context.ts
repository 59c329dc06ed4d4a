import * as fs from "node:fs/promises"
import * as path from "node:path"
import { ToolError } from "@alisio/domain/Errors"
import { RunId, SessionId, ToolCallId } from "@alisio/domain/Ids"
import type { Tool, ToolContext, ToolResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"

/** A ToolContext for tests, and what the tool did through it. */
export interface TestToolContext {
  readonly context: ToolContext
  /** Every progress chunk, in order. */
  readonly progress: Ref.Ref<ReadonlyArray<string>>
  /** The same chunks, to wait on. */
  readonly progressQueue: Queue.Queue<string>
  /** Paths the tool asked to reach outside the workspace. */
  readonly externalRequests: Ref.Ref<ReadonlyArray<string>>
}

export const makeContext = (
  cwd: string,
  options: { readonly approveExternal?: boolean; readonly answer?: string } = {}
): Effect.Effect<TestToolContext> =>
  Effect.gen(function* () {
    const progress = yield* Ref.make<ReadonlyArray<string>>([])
    const progressQueue = yield* Queue.unbounded<string>()
    const externalRequests = yield* Ref.make<ReadonlyArray<string>>([])
    const context: ToolContext = {
      sessionId: SessionId.make("ses-test"),
      runId: RunId.make("run-test"),
      toolCallId: ToolCallId.make("call-test"),
      cwd,
      readOnly: false,
      progress: (text) =>
        Ref.update(progress, (all) => [...all, text]).pipe(Effect.zipRight(Queue.offer(progressQueue, text))),
      approveExternalPath: (target) =>
        Ref.update(externalRequests, (all) => [...all, target]).pipe(
          Effect.zipRight(
            options.approveExternal === true
              ? Effect.void
              : Effect.fail(new ToolError({ message: `access to ${target} was denied` }))
          )
        ),
      askUser: () =>
        options.answer === undefined
          ? Effect.fail(new ToolError({ message: "headless run" }))
          : Effect.succeed(options.answer)
    }
    return { context, progress, progressQueue, externalRequests }
  })

export { tempDir } from "../helpers/tempDir.js"

/** Creates files (and their folders) below `root`. */
export const writeFiles = (root: string, files: Record<string, string | Uint8Array>): Effect.Effect<void> =>
  Effect.promise(async () => {
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(root, name)
      await fs.mkdir(path.dirname(file), { recursive: true })
      await fs.writeFile(file, content)
    }
  })

export const readText = (file: string): Effect.Effect<string> => Effect.promise(() => fs.readFile(file, "utf8"))

export const readBytes = (file: string): Effect.Effect<Buffer> => Effect.promise(() => fs.readFile(file))

/** The text parts of a result, joined. */
export const textOf = (result: ToolResult): string =>
  result.content.map((part) => (part._tag === "text" ? part.text : "")).join("")

/** Runs a tool and returns its text; fails with its ToolError. */
export const call = (tool: Tool, args: unknown, context: ToolContext): Effect.Effect<string, ToolError> =>
  Effect.map(tool.execute(args, context), textOf)

/** Runs a tool expecting a ToolError, and returns its message. */
export const callFails = (tool: Tool, args: unknown, context: ToolContext): Effect.Effect<string> =>
  tool.execute(args, context).pipe(
    Effect.flip,
    Effect.map((error) => error.message),
    Effect.orDieWith(() => new Error(`${tool.name} succeeded where a ToolError was expected`))
  )

/** Waits until the progress seen so far satisfies `done`, and returns it joined. */
export const awaitProgress = (test: TestToolContext, done: (text: string) => boolean): Effect.Effect<string> =>
  Effect.gen(function* () {
    let seen = (yield* Ref.get(test.progress)).join("")
    while (!done(seen)) {
      yield* Queue.take(test.progressQueue)
      seen = (yield* Ref.get(test.progress)).join("")
    }
    return seen
  })
