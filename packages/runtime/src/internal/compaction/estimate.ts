// How many tokens a request holds, without a tokenizer (CTX-1): characters / 4, corrected by the
// prompt tokens the provider reported for an earlier request of the run when there are some.

import type { ModelRequest } from "@alisio/domain/LanguageModel"
import type { Message } from "@alisio/domain/Message"
import type { ToolSpec } from "@alisio/domain/Tool"

export const CHARS_PER_TOKEN = 4

/** What an image costs, as characters: about 1 000 tokens (a mid-sized picture on most APIs). */
const IMAGE_CHARS = 4_000
/** Role, separators and framing the chat template adds to every message. */
const MESSAGE_OVERHEAD_CHARS = 16

// Stored messages are immutable and reach every request of a run as the same objects: each is
// measured once (`pnpm bench compaction`).
const measured = new WeakMap<object, number>()
const toolsMeasured = new WeakMap<object, number>()

/** The characters a message puts into a request. */
export const messageChars = (message: Message): number => {
  const cached = measured.get(message)
  if (cached !== undefined) return cached
  let chars = MESSAGE_OVERHEAD_CHARS
  if (message.role === "system") chars += message.content.length
  else {
    for (const part of message.content) {
      switch (part._tag) {
        case "text":
        case "reasoning":
          chars += part.text.length
          break
        case "image":
          chars += IMAGE_CHARS
          break
        case "tool_call":
          chars += part.name.length + part.arguments.length + part.id.length + MESSAGE_OVERHEAD_CHARS
          break
      }
    }
  }
  if (message.role === "tool") chars += message.toolCallId.length + message.toolName.length
  measured.set(message, chars)
  return chars
}

const toolChars = (tools: ReadonlyArray<ToolSpec>): number => {
  const cached = toolsMeasured.get(tools)
  if (cached !== undefined) return cached
  const chars = tools.length === 0 ? 0 : JSON.stringify(tools).length
  toolsMeasured.set(tools, chars)
  return chars
}

/** The characters of a whole request: system prompt, tool specs and messages. */
export const requestChars = (request: ModelRequest): number => {
  let chars = (request.system?.length ?? 0) + toolChars(request.tools)
  for (const message of request.messages) chars += messageChars(message)
  return chars
}

/**
 * Tokens per `chars / 4` as the provider counted them on an earlier request of the run; absent
 * until a provider reports usage. A report far from the estimate (a server that always says the
 * same number) is ignored rather than trusted.
 */
export interface Calibration {
  ratio: number | undefined
}

const MIN_RATIO = 0.25
const MAX_RATIO = 4

export const estimateTokens = (chars: number, calibration: Calibration): number =>
  Math.ceil((chars / CHARS_PER_TOKEN) * (calibration.ratio ?? 1))

/** Learns from the prompt tokens a provider reported for a request of `chars` characters. */
export const calibrate = (calibration: Calibration, chars: number, promptTokens: number): void => {
  if (chars <= 0 || promptTokens <= 0) return
  const ratio = promptTokens / (chars / CHARS_PER_TOKEN)
  if (ratio >= MIN_RATIO && ratio <= MAX_RATIO) calibration.ratio = ratio
}
