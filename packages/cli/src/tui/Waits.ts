// Puts the oldest open wait on the screen as a dialog in the editor's place, and the next one when
// it is answered or withdrawn (the run cancelled). An approval says what will run; "always" grants
// the tool, the command prefix or the folder for the rest of the session, open approvals included.
import * as Effect from "effect/Effect"
import { ApprovalDialog, type Dialog, PlanDialog, QuestionDialog } from "./Dialogs.js"
import { type Grants, offerFor } from "./Grants.js"
import type { Screen } from "./Screen.js"
import { summariseArguments } from "./ToolCard.js"
import type { Wait, WaitBoard } from "./TuiInteraction.js"

/**
 * After an "always", the other open approvals it covers are given by it too: subagents (or calls of
 * one response) that asked for the same thing at once are not asked about one by one.
 */
const approveCovered = (board: WaitBoard, grants: Grants, answered: Wait) => {
  for (const wait of board.all) {
    if (wait !== answered && wait._tag === "Approval" && grants.allows(wait.request)) {
      wait.answer({ approved: true, by: "policy" })
    }
  }
}

const dialogFor = (screen: Screen, board: WaitBoard, wait: Wait, grants: Grants): Dialog => {
  switch (wait._tag) {
    case "Approval": {
      const request = wait.request
      const offer = offerFor(request)
      const asked =
        request.kind === "external_directory"
          ? `Allow ${request.tool ?? "the tool"} to access a path outside the workspace?`
          : `Allow ${request.tool ?? "this tool"} (${request.effect ?? "external"})?`
      // A subagent's request says which one asks (CH-4): "general › explore: Allow bash (process)?"
      const title = request.label === undefined ? asked : `${request.label}: ${asked}`
      const details =
        request.kind === "external_directory"
          ? (request.path ?? request.summary)
          : request.tool !== undefined && request.arguments !== undefined
            ? request.tool === "bash"
              ? (commandOf(request.arguments) ?? summariseArguments(request.tool, request.arguments))
              : prettyArguments(request.arguments)
            : request.summary
      return new ApprovalDialog(screen.theme, title, details, offer, (choice) => {
        if (choice === "always" && offer !== undefined) {
          grants.grant(offer.key)
          approveCovered(board, grants, wait)
        }
        wait.answer({ approved: choice !== "no", by: "person" })
      })
    }
    case "Question":
      return new QuestionDialog(screen.theme, wait.question.question, wait.question.options ?? [], wait.answer)
    case "Plan":
      return new PlanDialog(screen.theme, wait.review.plan, (approved, feedback) =>
        wait.answer({ approved, ...(feedback === undefined ? {} : { feedback }) })
      )
  }
}

/** A command line as it will run, its lines kept: folded into one, a second command reads as arguments of the first. */
const commandOf = (text: string): string | undefined => {
  try {
    const value = JSON.parse(text) as { readonly command?: unknown } | null
    return typeof value?.command === "string" && value.command.trim() !== "" ? value.command : undefined
  } catch {
    return undefined
  }
}

const prettyArguments = (text: string): string => {
  try {
    const value = JSON.parse(text) as unknown
    if (value !== null && typeof value === "object") {
      return Object.entries(value as Record<string, unknown>)
        .map(([key, field]) => {
          const shown = typeof field === "string" ? field : JSON.stringify(field)
          return `${key}: ${shown.length > 400 ? `${shown.slice(0, 400)}…` : shown}`
        })
        .join("\n")
    }
  } catch {
    // Shown as it came.
  }
  return text
}

/** Follows the board for the life of the scope. */
export const showWaits = (screen: Screen, board: WaitBoard, grants: Grants) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      let shown: { readonly wait: Wait; readonly dialog: Dialog } | undefined
      const sync = () => {
        const current = board.current
        if (shown !== undefined && shown.wait === current) return
        if (shown !== undefined) screen.closeDialog(shown.dialog)
        shown = undefined
        if (current !== undefined) {
          const dialog = dialogFor(screen, board, current, grants)
          shown = { wait: current, dialog }
          screen.showDialog(dialog, true)
        }
        screen.status.update((s) => {
          s.waits = board.size
        })
      }
      return board.onChange(sync)
    }),
    (unsubscribe) => Effect.sync(unsubscribe)
  )
