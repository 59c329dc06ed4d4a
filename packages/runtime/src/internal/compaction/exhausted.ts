// The run-ending errors of a context window that cannot hold the next request (CTX-1): what the
// window is, where it comes from, and the remedy that applies.

import { ContextExhaustedError } from "@alisio/domain/Errors"
import type { ContextWindow } from "@alisio/domain/Limits"
import type { RunState } from "../runState.js"
import type { Budget } from "./plan.js"

export const sourceText: Record<ContextWindow["source"], string> = {
  user: "limits.maxContextTokens",
  model: "the model's",
  default: "the default; set limits.maxContextTokens to the model's",
  provider: "as the provider named it"
}

export const exhausted = (state: RunState, tokens: number, budget: Budget, why: string, providerCode?: string) =>
  new ContextExhaustedError({
    message:
      `The conversation no longer fits the context window of ${state.options.model} ` +
      `(${budget.window.tokens} tokens, ${sourceText[budget.window.source]}): the next request needs about ${tokens} tokens ` +
      `and ${budget.room} are left for it; ${why}. Start a new session, or shorten the prompt.`,
    context: {
      tokens,
      contextWindow: budget.window.tokens,
      source: budget.window.source,
      model: state.options.model
    },
    ...(providerCode === undefined ? {} : { providerCode })
  })

/** Why no prompt fits: the system prompt and the tools alone pass the room, with the remedy. */
export const windowTooSmallText = (model: string, window: ContextWindow, fixed: number, room: number): string =>
  `The context window of ${model} (${window.tokens} tokens, ${sourceText[window.source]}) ` +
  `is too small for this run: the system prompt and the tool definitions alone take about ${fixed} tokens, ` +
  `and ${room} are left for a request.`

export const windowTooSmallRemedy = (window: ContextWindow): string =>
  window.source === "user"
    ? "Raise --max-context-tokens (limits.maxContextTokens)."
    : "Use a model with a larger context window, or turn off plugins and MCP servers this run does not need."

/**
 * The system prompt and the tools alone pass the room: no compaction can help, and a new session
 * would not either; the remedy is a larger window or fewer tools.
 */
export const windowTooSmall = (state: RunState, tokens: number, fixed: number, budget: Budget) =>
  new ContextExhaustedError({
    message: `${windowTooSmallText(state.options.model, budget.window, fixed, budget.room)} ${windowTooSmallRemedy(budget.window)}`,
    context: {
      tokens,
      contextWindow: budget.window.tokens,
      source: budget.window.source,
      model: state.options.model
    }
  })
