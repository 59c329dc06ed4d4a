// The Interaction the UI binds (UI-1): each approval, question or plan review becomes a wait on
// the board, which the screen shows as a dialog; the answer resumes the waiting tool. Callers wrap
// these in HumanWaits.around, so the run's active clock is paused while the dialog is open (LIM-1).
// An interrupted wait (the run cancelled) leaves the board at once.
import type { UserQuestion } from "@alisio/domain/Tool"
import {
  type ApprovalAnswer,
  type ApprovalRequest,
  Interaction,
  type PlanDecision,
  type PlanReview
} from "@alisio/runtime/Interaction"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Grants } from "./Grants.js"

export type Wait =
  | { readonly _tag: "Approval"; readonly request: ApprovalRequest; readonly answer: (answer: ApprovalAnswer) => void }
  | {
      readonly _tag: "Question"
      readonly sessionId: string
      readonly question: UserQuestion
      readonly answer: (text: string) => void
    }
  | { readonly _tag: "Plan"; readonly review: PlanReview; readonly answer: (decision: PlanDecision) => void }

/** The waits open now, oldest first; the screen shows the first one. */
export class WaitBoard {
  private readonly open: Array<Wait> = []
  private listeners = new Set<() => void>()

  get current(): Wait | undefined {
    return this.open[0]
  }

  get size(): number {
    return this.open.length
  }

  /** Every open wait, oldest first. */
  get all(): ReadonlyArray<Wait> {
    return [...this.open]
  }

  add(wait: Wait): void {
    this.open.push(wait)
    this.changed()
  }

  remove(wait: Wait): void {
    const index = this.open.indexOf(wait)
    if (index === -1) return
    this.open.splice(index, 1)
    this.changed()
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private changed(): void {
    for (const listener of this.listeners) listener()
  }
}

/** Puts a wait on the board until it is answered; interruption takes it off. */
const waitFor = <A>(board: WaitBoard, make: (answer: (value: A) => void) => Wait): Effect.Effect<A> =>
  Effect.async<A>((resume) => {
    let done = false
    const wait = make((value) => {
      if (done) return
      done = true
      board.remove(wait)
      resume(Effect.succeed(value))
    })
    board.add(wait)
    return Effect.sync(() => {
      done = true
      board.remove(wait)
    })
  })

export const layer = (
  board: WaitBoard,
  options: { readonly approveAll: boolean; readonly grants: Grants }
): Layer.Layer<Interaction> =>
  Layer.succeed(
    Interaction,
    Interaction.of({
      approve: (request) =>
        options.approveAll || options.grants.allows(request)
          ? Effect.succeed({ approved: true, by: "policy" as const })
          : waitFor<ApprovalAnswer>(board, (answer) => ({ _tag: "Approval", request, answer })),
      ask: (sessionId, question) =>
        waitFor<string>(board, (answer) => ({ _tag: "Question", sessionId, question, answer })),
      reviewPlan: (review) => waitFor<PlanDecision>(board, (answer) => ({ _tag: "Plan", review, answer }))
    })
  )
