import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { RunId, SessionId } from "./Ids.js"
import { Limits } from "./Limits.js"
import { RunStatus } from "./RunEvent.js"
import { Usage } from "./Usage.js"

/** The approval policy of a run: approve what needs approval, ask a person, or deny it. */
export const ApprovalPolicy = Schema.Literal("approve", "ask", "deny")
export type ApprovalPolicy = typeof ApprovalPolicy.Type

/** What a child asks for; anything its parent lacks is narrowed away (CH-1). */
export const SpawnOptions = Schema.Struct({
  prompt: Schema.String,
  title: Schema.optional(Schema.String),
  tools: Schema.optional(Schema.Array(Schema.String)),
  capabilities: Schema.optional(Schema.Array(Schema.String)),
  approvals: Schema.optional(ApprovalPolicy),
  readOnly: Schema.optional(Schema.Boolean),
  model: Schema.optional(Schema.String),
  limits: Schema.optional(Limits)
})
export type SpawnOptions = typeof SpawnOptions.Type

/** A spawned child: its session and run. */
export const ChildHandle = Schema.Struct({ sessionId: SessionId, runId: RunId })
export type ChildHandle = typeof ChildHandle.Type

/** How a child run ended. */
export const ChildOutcome = Schema.Struct({
  sessionId: SessionId,
  runId: RunId,
  status: RunStatus,
  text: Schema.String,
  usage: Usage,
  error: Schema.optional(Schema.String)
})
export type ChildOutcome = typeof ChildOutcome.Type

/** A child session spawn was refused by a runtime guard (depth or concurrency). */
export class ChildSessionLimitError extends Schema.TaggedError<ChildSessionLimitError>()("ChildSessionLimitError", {
  limit: Schema.Literal("depth", "concurrency"),
  max: Schema.Number,
  message: Schema.String
}) {}

/** The child-session service as plugins see it (`api.sessions`, CH-1). */
export interface ChildSessionsApi {
  readonly spawn: (options: SpawnOptions) => Effect.Effect<ChildHandle, ChildSessionLimitError>
  readonly await: (child: ChildHandle) => Effect.Effect<ChildOutcome>
  readonly abort: (child: ChildHandle) => Effect.Effect<void>
  readonly list: (parent: SessionId) => Effect.Effect<ReadonlyArray<ChildHandle & { readonly status: RunStatus }>>
}
