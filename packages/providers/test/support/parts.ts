// Folding response parts into what a runner would see, and checking the part order contract.
import type { FinishReason, ResponsePart } from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"

export interface AssembledCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

export interface Assembled {
  readonly text: string
  readonly reasoning: string
  readonly calls: ReadonlyArray<AssembledCall>
  readonly finish: { readonly reason: FinishReason; readonly usage?: Usage } | undefined
}

export const assemble = (parts: Iterable<ResponsePart>): Assembled => {
  let text = ""
  let reasoning = ""
  const calls: Array<{ id: string; name: string; arguments: string }> = []
  let finish: Assembled["finish"]
  for (const part of parts) {
    switch (part._tag) {
      case "TextDelta":
        text += part.text
        break
      case "ReasoningDelta":
        reasoning += part.text
        break
      case "ToolCallStart":
        calls.push({ id: part.id, name: part.name, arguments: "" })
        break
      case "ToolCallDelta": {
        const call = calls.find((c) => c.id === part.id)
        if (call !== undefined) call.arguments += part.argumentsDelta
        break
      }
      case "Finish":
        finish = part.usage === undefined ? { reason: part.reason } : { reason: part.reason, usage: part.usage }
        break
    }
  }
  return { text, reasoning, calls, finish }
}

/**
 * Breaches of the part contract: a call is started once before its deltas and its end; nothing of a
 * call follows its end; every started call ends before `Finish`; a complete stream ends with exactly
 * one `Finish`, and nothing follows it; `Retrying` parts come only before anything else.
 */
export const contractViolations = (parts: ReadonlyArray<ResponsePart>, complete: boolean): Array<string> => {
  const problems: Array<string> = []
  const started = new Set<string>()
  const ended = new Set<string>()
  let finishes = 0
  parts.forEach((part, i) => {
    if (finishes > 0) problems.push(`${part._tag} at ${i} after Finish`)
    if (part._tag === "Retrying" && parts.slice(0, i).some((before) => before._tag !== "Retrying"))
      problems.push(`Retrying at ${i} after content`)
    switch (part._tag) {
      case "ToolCallStart":
        if (started.has(part.id)) problems.push(`call ${part.id} started twice`)
        started.add(part.id)
        break
      case "ToolCallDelta":
      case "ToolCallEnd":
        if (!started.has(part.id)) problems.push(`${part._tag} for unstarted call ${part.id}`)
        if (ended.has(part.id)) problems.push(`${part._tag} for ended call ${part.id}`)
        if (part._tag === "ToolCallEnd") ended.add(part.id)
        break
      case "Finish":
        finishes++
        for (const id of started) if (!ended.has(id)) problems.push(`call ${id} not ended before Finish`)
        break
    }
  })
  if (complete && finishes !== 1) problems.push(`${finishes} Finish parts`)
  if (complete && parts.at(-1)?._tag !== "Finish") problems.push("the stream does not end with Finish")
  return problems
}
