// A test tool that delegates to child sessions, and helpers to script a tree on the FakeProvider.

import { ApprovalPolicy } from "@alisio/domain/ChildSession"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { Limits } from "@alisio/domain/Limits"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import type * as ChildSessions from "@alisio/runtime/ChildSessions"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** `delegate`: spawns a child with the given prompt and permissions, waits for it, returns its outcome. */
export const delegateTool = (children: ChildSessions.ChildSessions["Type"]) =>
  defineTool({
    name: "delegate",
    description: "Runs a task in a child session.",
    effect: "internal",
    input: Schema.Struct({
      prompts: Schema.Array(Schema.String),
      tools: Schema.optional(Schema.Array(Schema.String)),
      approvals: Schema.optional(ApprovalPolicy),
      readOnly: Schema.optional(Schema.Boolean),
      limits: Schema.optional(Limits)
    }),
    run: (input) =>
      Effect.gen(function* () {
        const handles = yield* Effect.forEach(input.prompts, (prompt) =>
          children.spawn({
            prompt,
            ...(input.tools === undefined ? {} : { tools: input.tools }),
            ...(input.approvals === undefined ? {} : { approvals: input.approvals }),
            ...(input.readOnly === undefined ? {} : { readOnly: input.readOnly }),
            ...(input.limits === undefined ? {} : { limits: input.limits })
          })
        )
        const outcomes = yield* Effect.forEach(handles, (handle) => children.await(handle), {
          concurrency: "unbounded"
        })
        return textResult(
          outcomes.map((o) => `${o.status}: ${o.text}${o.error === undefined ? "" : ` (${o.error})`}`).join("\n")
        )
      }).pipe(
        Effect.catchTag("ChildSessionLimitError", (error) =>
          Effect.succeed(textResult(error.message, { isError: true }))
        ),
        Effect.orDie
      )
  })

export const promptOf = (request: ModelRequest): string => {
  const first = request.messages.find((m) => m.role === "user")
  return first?.role === "user" && first.content[0]?._tag === "text" ? first.content[0].text : ""
}
export const answered = (request: ModelRequest) => request.messages.some((m) => m.role === "tool")

/** root → child → grandchild, each delegating once; the grandchild streams, then hangs. */
export const hangingTree: Fake.Script = (request) => {
  switch (promptOf(request)) {
    case "root":
      return Fake.callTools({ id: "r1", name: "delegate", args: { prompts: ["child"] } })
    case "child":
      return Fake.callTools({ id: "c1", name: "delegate", args: { prompts: ["grandchild"] } })
    default:
      return [...Fake.text("working"), Fake.silence]
  }
}
