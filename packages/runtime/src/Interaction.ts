import type { SessionId } from "@alisio/domain/Ids"
import type { ApprovalKind } from "@alisio/domain/RunEvent"
import type { PlanDecision, ToolEffect, UserQuestion } from "@alisio/domain/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** What a person is asked to approve. */
export interface ApprovalRequest {
  readonly sessionId: SessionId
  readonly approvalId: string
  readonly kind: ApprovalKind
  readonly summary: string
  readonly tool?: string
  readonly effect?: ToolEffect
  readonly path?: string
  /** The call's arguments as the model wrote them (JSON text), so a UI can show what will run. */
  readonly arguments?: string | undefined
  /** The tool call asking, when it is one. */
  readonly toolCallId?: string | undefined
  /** Who asks, when it is a child session: its path of labels, e.g. "general › explore". */
  readonly label?: string
}

/** The answer, and whether a person or a standing policy gave it. */
export interface ApprovalAnswer {
  readonly approved: boolean
  readonly by: "person" | "policy"
}

/** A plan put to the person before the work it describes starts (plan review, TL-1). */
export interface PlanReview {
  readonly sessionId: SessionId
  /** The plan, as Markdown. */
  readonly plan: string
}

/** What the person said of a plan: go on, or change it as `feedback` says. */
export type { PlanDecision } from "@alisio/domain/Tool"

/** Nobody is there to answer (a headless run). */
export class NoPersonError extends Schema.TaggedError<NoPersonError>()("NoPersonError", {
  message: Schema.String
}) {}

/**
 * The UI port the human waits call (LIM-1): a terminal, a web page, a policy or a test script.
 * Callers wrap these in `HumanWaits.around`, so binding a UI pauses clocks for free.
 */
export class Interaction extends Context.Tag("@alisio/runtime/Interaction")<
  Interaction,
  {
    readonly approve: (request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>
    readonly ask: (sessionId: SessionId, question: UserQuestion) => Effect.Effect<string, NoPersonError>
    /** Puts a plan to the person; absent where no UI can show one (then nobody can review it). */
    readonly reviewPlan?: (review: PlanReview) => Effect.Effect<PlanDecision, NoPersonError>
  }
>() {}

/** No person present: approvals follow the policy, questions fail. */
export const layerHeadless = (policy: { readonly approveAll: boolean }): Layer.Layer<Interaction> =>
  Layer.succeed(
    Interaction,
    Interaction.of({
      approve: () => Effect.succeed({ approved: policy.approveAll, by: "policy" }),
      ask: () =>
        new NoPersonError({
          message:
            "No person is available to answer questions in this headless run; decide with the information you have."
        })
    })
  )

/** A scripted person for tests: each answer is an Effect, so it may sleep on the TestClock first. */
export const layerScripted = (script: {
  readonly approve?: (request: ApprovalRequest) => Effect.Effect<boolean>
  readonly ask?: (question: UserQuestion) => Effect.Effect<string, NoPersonError>
}): Layer.Layer<Interaction> =>
  Layer.succeed(
    Interaction,
    Interaction.of({
      approve: (request) =>
        Effect.map(script.approve?.(request) ?? Effect.succeed(true), (approved) => ({
          approved,
          by: "person" as const
        })),
      ask: (_session, question) => script.ask?.(question) ?? Effect.succeed("")
    })
  )
