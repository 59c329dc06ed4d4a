import type { FinishReason, ResponsePart } from "@alisio/domain/LanguageModel"
import type { Usage } from "@alisio/domain/Usage"
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
import { ThinkTags } from "./ThinkTags.js"

const chatFinishReason = (reason: string): FinishReason => {
  switch (reason) {
    case "stop":
    case "end_turn":
    case "eos":
      return "stop"
    case "tool_calls":
    case "function_call":
      return "tool_calls"
    case "length":
    case "max_tokens":
      return "length"
    case "content_filter":
      return "content_filter"
    default:
      return "other"
  }
}

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value.length > 0 ? value : undefined

/**
 * Chat Completions chunks → response parts, for every server style seen in the wild:
 * - tool calls are keyed by `index`, or by their position in the delta when `index` is missing;
 *   a fragment that brings a new name and a different id at a key already in use starts a new call
 *   (servers that reuse index 0); empty ids and names are ignored, arguments are appended;
 * - ids and names may come only in the first fragment, or a whole call in one fragment; an id
 *   another call of the response already has is replaced by a new one;
 * - reasoning comes as `reasoning_content` or `reasoning`, or as a `<think>` block opening the
 *   content (`ThinkTags`); content may be an array of parts;
 * - usage may come on every chunk (the last one wins), with the finish or after it, or never;
 * - errors come as a chunk with `error`, an `event: error`, or llama.cpp's `error:` field.
 * The response is complete at `[DONE]`, or at the end of the body once a finish reason arrived.
 */
export class ChatAssembler implements Assembler {
  private readonly calls: Array<CallState> = []
  private readonly byKey = new Map<number, CallState>()
  /** The ids the server gave the calls so far: a set, as a response may hold thousands of calls. */
  private readonly serverIds = new Set<string>()
  private reason: FinishReason | undefined = undefined
  private usage: Usage | undefined = undefined
  private output = false
  private readonly think = new ThinkTags()

  constructor(
    private readonly provider: string,
    private readonly makeId: () => string
  ) {}

  onEvent(event: SseEvent, out: Array<ResponsePart>): Step {
    if (event.error !== undefined) return fromStreamPayload(this.provider, parseOr(event.error))
    const data = event.data
    if (data.startsWith("[DONE]")) return this.complete(out, true)
    let chunk: unknown
    try {
      chunk = JSON.parse(data)
    } catch {
      // After the finish only usage and `[DONE]` are due: a body cut inside them (a connection
      // dropped in the last bytes, a truncated gzip) still carried the whole answer.
      if (this.reason !== undefined) return this.complete(out, true)
      return invalidResponse(this.provider, `malformed JSON in the stream: ${data.slice(0, 200)}`)
    }
    if (!isRecord(chunk)) return undefined
    if (event.event === "error" || (chunk.error !== undefined && chunk.error !== null)) {
      return fromStreamPayload(this.provider, chunk)
    }
    const usage = usageOf(chunk.usage) ?? (isRecord(chunk.x_groq) ? usageOf(chunk.x_groq.usage) : undefined)
    if (usage !== undefined) this.usage = usage
    const choices = chunk.choices
    if (!Array.isArray(choices)) return undefined
    for (const choice of choices) {
      if (!isRecord(choice) || (typeof choice.index === "number" && choice.index !== 0)) continue
      if (isRecord(choice.delta)) this.delta(choice.delta, out)
      const reason = nonEmpty(choice.finish_reason)
      if (reason === "error")
        return fromStreamPayload(this.provider, { message: "the server reported an error mid-stream" })
      if (reason !== undefined && this.reason === undefined) {
        this.reason = chatFinishReason(reason)
        this.think.flush(out)
        endCalls(this.calls, this.makeId, out)
      }
    }
    return undefined
  }

  onEnd(out: Array<ResponsePart>): "done" | Failure {
    return this.complete(out, false)
  }

  finishing(): boolean {
    return this.reason !== undefined
  }

  private complete(out: Array<ResponsePart>, sawDone: boolean): "done" | Failure {
    let reason = this.reason
    if (reason === undefined) {
      if (!sawDone) return invalidResponse(this.provider, "the stream ended before the response was complete")
      if (!this.output) return invalidResponse(this.provider, "the stream ended without any response")
      reason = "stop"
    }
    // Some servers (Ollama before 0.5.12) finish tool calls with `stop`.
    if (reason === "stop" && this.calls.some((call) => call.name !== undefined)) reason = "tool_calls"
    this.think.flush(out)
    endCalls(this.calls, this.makeId, out)
    out.push(finish(reason, this.usage))
    return "done"
  }

  private delta(delta: Record<string, unknown>, out: Array<ResponsePart>): void {
    const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning)
    if (reasoning !== undefined) {
      this.output = true
      out.push({ _tag: "ReasoningDelta", text: reasoning })
    }
    const content = delta.content
    if (typeof content === "string") {
      if (content.length > 0) {
        this.output = true
        this.think.push(content, out)
      }
    } else if (Array.isArray(content)) {
      this.contentParts(content, out)
    }
    const refusal = nonEmpty(delta.refusal)
    if (refusal !== undefined) {
      this.output = true
      out.push({ _tag: "TextDelta", text: refusal })
    }
    const toolCalls = delta.tool_calls
    if (Array.isArray(toolCalls)) {
      for (let position = 0; position < toolCalls.length; position++) {
        const fragment: unknown = toolCalls[position]
        if (isRecord(fragment)) this.fragment(fragment, position, out)
      }
    }
  }

  /** Mistral's Magistral streams content as `[{type:"text",text}, {type:"thinking",thinking:[…]}]`. */
  private contentParts(parts: ReadonlyArray<unknown>, out: Array<ResponsePart>): void {
    const before = out.length
    for (const part of parts) {
      if (typeof part === "string") {
        if (part.length > 0) out.push({ _tag: "TextDelta", text: part })
      } else if (isRecord(part)) {
        if (part.type === "thinking") {
          const thinking = part.thinking
          const texts = Array.isArray(thinking) ? thinking : [thinking]
          for (const item of texts) {
            const text = typeof item === "string" ? item : isRecord(item) ? nonEmpty(item.text) : undefined
            if (text !== undefined && text.length > 0) out.push({ _tag: "ReasoningDelta", text })
          }
        } else {
          const text = nonEmpty(part.text)
          if (text !== undefined) out.push({ _tag: "TextDelta", text })
        }
      }
    }
    if (out.length > before) this.output = true
  }

  /** A server that gives two calls one id (or reuses `call_0`) still gets two calls: a new id is made. */
  private unused(id: string | undefined): string | undefined {
    if (id === undefined || this.serverIds.has(id)) return undefined
    this.serverIds.add(id)
    return id
  }

  private fragment(fragment: Record<string, unknown>, position: number, out: Array<ResponsePart>): void {
    const key = typeof fragment.index === "number" ? fragment.index : position
    const id = nonEmpty(fragment.id)
    const fn = isRecord(fragment.function) ? fragment.function : {}
    const name = nonEmpty(fn.name)
    const rawArguments = fn.arguments
    const args =
      typeof rawArguments === "string" ? rawArguments : isRecord(rawArguments) ? JSON.stringify(rawArguments) : ""
    let call = this.byKey.get(key)
    const anotherCall =
      call !== undefined &&
      name !== undefined &&
      id !== undefined &&
      call.serverId !== undefined &&
      call.serverId !== id
    if (call === undefined || anotherCall) {
      call = newCall(this.unused(id))
      this.byKey.set(key, call)
      this.calls.push(call)
    } else if (call.ended) {
      return
    }
    this.output = true
    if (call.serverId === undefined && call.id === undefined) call.serverId = this.unused(id)
    if (call.name === undefined) call.name = name
    startCall(call, this.makeId, out)
    appendArguments(call, args, out)
  }
}

const parseOr = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return { message: text }
  }
}
