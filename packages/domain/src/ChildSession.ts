import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { UnknownModelError } from "./Errors.js"
import { RunId, SessionId } from "./Ids.js"
import { Limits } from "./Limits.js"
import type { PluginError } from "./Plugin.js"
import { RunStatus, ToolCallStatus } from "./RunEvent.js"
import { ToolEffect } from "./Tool.js"
import { Usage } from "./Usage.js"

/** The approval policy of a run: approve what needs approval, ask a person, or deny it. */
export const ApprovalPolicy = Schema.Literal("approve", "ask", "deny")
export type ApprovalPolicy = typeof ApprovalPolicy.Type

/** An approval policy per tool effect; an effect left out keeps the parent's policy. */
export const EffectApprovals = Schema.Struct({
  read: Schema.optional(ApprovalPolicy),
  write: Schema.optional(ApprovalPolicy),
  external: Schema.optional(ApprovalPolicy),
  internal: Schema.optional(ApprovalPolicy)
})
export type EffectApprovals = typeof EffectApprovals.Type

/** What a child asks for; anything its parent lacks is narrowed away (CH-1). */
export const SpawnOptions = Schema.Struct({
  prompt: Schema.String,
  title: Schema.optional(Schema.String),
  /** The parent's tools the child may use; all of them by default. */
  tools: Schema.optional(Schema.Array(Schema.String)),
  /** Tools the child must not have, taken from what `tools` leaves it. */
  excludeTools: Schema.optional(Schema.Array(Schema.String)),
  capabilities: Schema.optional(Schema.Array(Schema.String)),
  /** One policy for every effect, or one per effect; never more than the parent's. */
  approvals: Schema.optional(Schema.Union(ApprovalPolicy, EffectApprovals)),
  readOnly: Schema.optional(Schema.Boolean),
  /** A model of the parent's provider, or `provider/model` resolved through the provider registry. */
  model: Schema.optional(Schema.String),
  limits: Schema.optional(Limits),
  /** The child's system prompt (an agent's instructions); a child has none by default. */
  system: Schema.optional(Schema.String),
  /**
   * Whether the instruction files of the child's workspace (the person's AGENTS.md, then the
   * repository's, root down to the workspace) follow its system prompt, as they follow the root
   * run's. On by default.
   */
  instructions: Schema.optional(Schema.Boolean),
  /**
   * The child's workspace; the parent's by default. From a plugin it must lie inside the parent's
   * workspace or inside the plugin's own folders (a git worktree under `paths.state`).
   */
  cwd: Schema.optional(Schema.String),
  /**
   * A short name for the child (an agent's). It is joined to its ancestors' labels with " › " into
   * the child's path ("general › explore"), which labels its approvals and `child_session_started`.
   */
  label: Schema.optional(Schema.String)
})
export type SpawnOptions = typeof SpawnOptions.Type

/** A spawned child: its session and run. */
export const ChildHandle = Schema.Struct({ sessionId: SessionId, runId: RunId })
export type ChildHandle = typeof ChildHandle.Type

/** How a child run ended, or (from `status`) that it is still queued or running, with empty text. */
export const ChildOutcome = Schema.Struct({
  sessionId: SessionId,
  runId: RunId,
  status: RunStatus,
  text: Schema.String,
  usage: Usage,
  error: Schema.optional(Schema.String)
})
export type ChildOutcome = typeof ChildOutcome.Type

/** A tool call of a child, from its journal: what it did, and so what it may have changed. */
export const ChildToolCall = Schema.Struct({
  name: Schema.String,
  effect: Schema.optional(ToolEffect),
  status: Schema.Union(ToolCallStatus, Schema.Literal("running")),
  /** The arguments as the model wrote them (JSON text). */
  arguments: Schema.String
})
export type ChildToolCall = typeof ChildToolCall.Type

/** A child session spawn was refused by a runtime guard (depth, concurrency, or a parent run that ended). */
export class ChildSessionLimitError extends Schema.TaggedError<ChildSessionLimitError>()("ChildSessionLimitError", {
  /** `ended`: the parent's run has ended, so no child can start in it any more. */
  limit: Schema.Literal("depth", "concurrency", "ended"),
  max: Schema.Number,
  message: Schema.String
}) {}

/** The child-session service as plugins see it (`api.sessions`, CH-1). */
export interface ChildSessionsApi {
  /** Starts a child of the run whose tool calls this. */
  readonly spawn: (
    options: SpawnOptions
  ) => Effect.Effect<ChildHandle, ChildSessionLimitError | UnknownModelError | PluginError>
  readonly await: (child: ChildHandle) => Effect.Effect<ChildOutcome>
  /**
   * Like `await`, but gives up (`None`) after `timeoutMs` of the calling run's active time: the
   * time does not count while a person is asked anywhere in the caller's tree, and the wait is not
   * a wait on a person (LIM-2). Call it from a tool.
   */
  readonly awaitWithin: (child: ChildHandle, timeoutMs: number) => Effect.Effect<Option.Option<ChildOutcome>>
  /** Where a child stands now, without waiting: queued or running (empty text), or how it ended. */
  readonly status: (child: ChildHandle) => Effect.Effect<ChildOutcome>
  /** The tool calls of the child's run so far, oldest first. */
  readonly toolCalls: (child: ChildHandle) => Effect.Effect<ReadonlyArray<ChildToolCall>>
  readonly abort: (child: ChildHandle) => Effect.Effect<void>
  readonly list: (parent: SessionId) => Effect.Effect<ReadonlyArray<ChildHandle & { readonly status: RunStatus }>>
  /**
   * Adds `text` to the next model request of `session` as a notice (stored as a user message
   * beginning `[notice]`): how a background child's end reaches its parent's next turn.
   */
  readonly notify: (session: SessionId, text: string) => Effect.Effect<void>
  /**
   * While the scope is open, a run of `session` that would end (an answer without tool calls)
   * waits for the next notice instead, then goes on with it: a parent with a background child.
   */
  readonly expectNotice: (session: SessionId) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Runs `work` in a fiber of the calling run's scope (call it from a tool), as its children run:
   * the run's ending interrupts it and waits for it to end before its terminal event (CH-2).
   * `None` once the run began to end: `work` was not started.
   */
  readonly forkInRun: <A>(work: Effect.Effect<A>) => Effect.Effect<Option.Option<Fiber.RuntimeFiber<A>>>
}
