import type { FinishReason, ResponsePart } from "@alisio/domain/LanguageModel"
import {
  type Assembler,
  appendArguments,
  type CallState,
  endCalls,
  finish,
  isRecord,
  newCall,
  type Step,
  startCall,
  usageOf
} from "./Assembler.js"
import { type Failure, fromStreamPayload, invalidResponse } from "./ErrorMapping.js"
import type { SseEvent } from "./Sse.js"

interface ResponsesCall extends CallState {
  /** Whether any argument text arrived, so `…arguments.done` does not repeat it. */
  streamed: boolean
}

const incompleteReason = (reason: unknown): FinishReason =>
  reason === "max_output_tokens" ? "length" : reason === "content_filter" ? "content_filter" : "other"

const text = (value: unknown): string | undefined => (typeof value === "string" && value.length > 0 ? value : undefined)

/**
 * Responses API events → response parts: output and refusal text, reasoning summaries (and raw
 * reasoning text), function calls keyed by item id (or output index), then `response.completed` /
 * `response.incomplete` (→ `length` for `max_output_tokens`). `error` and `response.failed` fail the
 * stream. The event type is read from the JSON `type`, falling back to the `event:` line.
 */
export class ResponsesAssembler implements Assembler {
  private readonly calls: Array<ResponsesCall> = []
  private readonly byItem = new Map<string, ResponsesCall>()

  constructor(
    private readonly provider: string,
    private readonly makeId: () => string
  ) {}

  onEvent(event: SseEvent, out: Array<ResponsePart>): Step {
    if (event.error !== undefined) return fromStreamPayload(this.provider, { message: event.error })
    if (event.data.startsWith("[DONE]")) {
      return invalidResponse(this.provider, "the stream ended before the response was complete")
    }
    let payload: unknown
    try {
      payload = JSON.parse(event.data)
    } catch {
      return invalidResponse(this.provider, `malformed JSON in the stream: ${event.data.slice(0, 200)}`)
    }
    if (!isRecord(payload)) return undefined
    const type = typeof payload.type === "string" ? payload.type : event.event
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const delta = text(payload.delta)
        if (delta !== undefined) out.push({ _tag: "TextDelta", text: delta })
        return undefined
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const delta = text(payload.delta)
        if (delta !== undefined) out.push({ _tag: "ReasoningDelta", text: delta })
        return undefined
      }
      case "response.reasoning_summary_part.added":
        if (typeof payload.summary_index === "number" && payload.summary_index > 0) {
          out.push({ _tag: "ReasoningDelta", text: "\n\n" })
        }
        return undefined
      case "response.output_item.added":
        if (isRecord(payload.item) && payload.item.type === "function_call") {
          this.item(payload.item, payload.output_index, out)
        }
        return undefined
      case "response.function_call_arguments.delta": {
        const call = this.find(payload)
        const delta = text(payload.delta)
        if (call !== undefined && !call.ended && delta !== undefined) {
          call.streamed = true
          appendArguments(call, delta, out)
        }
        return undefined
      }
      case "response.function_call_arguments.done": {
        const call = this.find(payload)
        const all = text(payload.arguments)
        if (call !== undefined && !call.ended && !call.streamed && all !== undefined) {
          call.streamed = true
          appendArguments(call, all, out)
        }
        return undefined
      }
      case "response.output_item.done":
        if (isRecord(payload.item) && payload.item.type === "function_call") {
          const call = this.item(payload.item, payload.output_index, out)
          const all = text(payload.item.arguments)
          if (!call.streamed && all !== undefined) {
            call.streamed = true
            appendArguments(call, all, out)
          }
          endCalls([call], this.makeId, out)
        }
        return undefined
      case "response.completed":
      case "response.incomplete": {
        const response = isRecord(payload.response) ? payload.response : {}
        const reason: FinishReason =
          type === "response.incomplete"
            ? incompleteReason(isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined)
            : this.calls.length > 0
              ? "tool_calls"
              : "stop"
        endCalls(this.calls, this.makeId, out)
        out.push(finish(reason, usageOf(response.usage)))
        return "done"
      }
      case "response.failed": {
        const response = isRecord(payload.response) ? payload.response : {}
        return fromStreamPayload(this.provider, response.error ?? { message: "the response failed" })
      }
      case "error":
        return fromStreamPayload(this.provider, payload)
      default:
        return undefined
    }
  }

  onEnd(): Failure {
    return invalidResponse(this.provider, "the stream ended before the response was complete")
  }

  private find(payload: Record<string, unknown>): ResponsesCall | undefined {
    const key = typeof payload.item_id === "string" ? payload.item_id : `#${String(payload.output_index)}`
    return this.byItem.get(key) ?? this.byItem.get(`#${String(payload.output_index)}`)
  }

  /** The call for a `function_call` item, created (and started) on first sight. */
  private item(item: Record<string, unknown>, outputIndex: unknown, out: Array<ResponsePart>): ResponsesCall {
    const itemId = text(item.id)
    const indexKey = `#${String(outputIndex)}`
    let call = (itemId === undefined ? undefined : this.byItem.get(itemId)) ?? this.byItem.get(indexKey)
    if (call === undefined) {
      call = { ...newCall(text(item.call_id) ?? itemId), streamed: false }
      this.calls.push(call)
      if (itemId !== undefined) this.byItem.set(itemId, call)
      this.byItem.set(indexKey, call)
    }
    if (call.name === undefined) call.name = text(item.name)
    startCall(call, this.makeId, out)
    return call
  }
}
