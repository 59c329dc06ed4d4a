// A plugin's provider as the host hands it to runs (PRV-3, PL-6): code the user installed, which
// may throw, die, hang, or stream what the runner cannot read. Each of those becomes a
// `ProviderError` naming the provider, which the run reports like a server's failure.

import { OutputTruncatedError, ProviderError } from "@alisio/domain/Errors"
import {
  FinishReason,
  type LanguageModelService,
  ModelInfo,
  type ResponsePart,
  Retrying
} from "@alisio/domain/LanguageModel"
import { Usage } from "@alisio/domain/Usage"
import * as Cause from "effect/Cause"
import type * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { causeMessage } from "./definition.js"

/** How long a plugin's provider may take to list its models (a run with `-m` waits for it). */
export const MODELS_TIMEOUT = Duration.seconds(30)

const makeChecks = () => ({
  finishReason: Schema.is(FinishReason),
  usage: Schema.is(Usage),
  retrying: Schema.is(Retrying),
  models: Schema.decodeUnknownEither(Schema.Array(ModelInfo), { errors: "first" }),
  modelError: (error: unknown): error is ProviderError | OutputTruncatedError =>
    Schema.is(ProviderError)(error) || Schema.is(OutputTruncatedError)(error)
})
let made: ReturnType<typeof makeChecks> | undefined
/** The Schemas' checks, made when a plugin's provider is first used, not when the host loads. */
const checks = () => {
  made ??= makeChecks()
  return made
}

const shapeOf = (value: unknown): string => {
  try {
    return JSON.stringify(value)?.slice(0, 120) ?? typeof value
  } catch {
    return typeof value
  }
}

const isText = (value: unknown): boolean => typeof value === "string"
const isId = (value: unknown): value is string => typeof value === "string" && value !== ""

/**
 * Why `part` is not one the runner reads, or undefined. Every delta passes here, so it checks by
 * hand what a Schema would: the tag, the types, and that a call's deltas follow its start.
 */
const partProblem = (part: unknown, started: Set<string>): string | undefined => {
  if (typeof part !== "object" || part === null) return `${shapeOf(part)} is not a response part`
  const fields = part as { readonly [key: string]: unknown }
  switch (fields._tag) {
    case "TextDelta":
    case "ReasoningDelta":
      return isText(fields.text) ? undefined : `a ${fields._tag} whose text is ${shapeOf(fields.text)}`
    case "ToolCallStart":
      if (!isId(fields.id) || !isText(fields.name)) return `a ToolCallStart without an id and a name: ${shapeOf(part)}`
      started.add(fields.id)
      return undefined
    case "ToolCallDelta":
    case "ToolCallEnd":
      if (!isId(fields.id) || !started.has(fields.id))
        return `a ${fields._tag} of a call that did not start: ${shapeOf(part)}`
      return fields._tag === "ToolCallEnd" || isText(fields.argumentsDelta)
        ? undefined
        : `a ToolCallDelta whose argumentsDelta is ${shapeOf(fields.argumentsDelta)}`
    case "Finish":
      return checks().finishReason(fields.reason) && (fields.usage === undefined || checks().usage(fields.usage))
        ? undefined
        : `a Finish with a reason other than ${FinishReason.literals.join(", ")}, or usage that is not token counts: ${shapeOf(part)}`
    case "Retrying":
      return checks().retrying(part) ? undefined : `a Retrying part that is not one: ${shapeOf(part)}`
    default:
      return `a part Alisio does not know: ${shapeOf(part)}`
  }
}

/** The first problem of a decoding, on one line: `[0].id: is missing`. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return error.message
  const where = issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")
  return `${where === "" ? "" : `${where.replace(/^\./, "")}: `}${issue.message}`
}

/** A plugin provider's LanguageModelService, guarded; `id` is its public id (`<plugin>:<provider>`). */
export const guardProvider = (pluginId: string, id: string, model: LanguageModelService): LanguageModelService => {
  const failed = (message: string) =>
    new ProviderError({ code: "invalid_response", provider: id, message: `The provider ${id} ${message}` })
  const fromCause = (cause: Cause.Cause<unknown>): ProviderError | OutputTruncatedError => {
    const failure = Cause.failureOption(cause)
    if (failure._tag === "Some" && checks().modelError(failure.value)) return failure.value
    return failed(`(of the plugin ${pluginId}) failed: ${causeMessage(cause)}`)
  }
  const asProviderError = (error: ProviderError | OutputTruncatedError): ProviderError =>
    error._tag === "ProviderError" ? error : failed(`failed: ${error.message}`)
  return {
    provider: id,
    stream: (request) => {
      const started = new Set<string>()
      return Stream.suspend(() => {
        const stream: unknown = model.stream(request)
        return typeof stream === "object" && stream !== null && Stream.StreamTypeId in stream
          ? (stream as Stream.Stream<ResponsePart, unknown>)
          : Stream.die(new Error(`its stream(request) returned ${shapeOf(stream)}, not a Stream`))
      }).pipe(
        Stream.mapChunksEffect((chunk) => {
          for (const part of chunk) {
            const problem = partProblem(part, started)
            if (problem !== undefined) return Effect.fail(failed(`sent ${problem}`))
          }
          return Effect.succeed(chunk as Chunk.Chunk<ResponsePart>)
        }),
        Stream.catchAllCause(
          (cause): Stream.Stream<never, ProviderError | OutputTruncatedError> =>
            Cause.isInterruptedOnly(cause)
              ? Stream.failCause(cause as Cause.Cause<never>)
              : Stream.fail(fromCause(cause))
        )
      )
    },
    models: Effect.suspend(() => {
      const models: unknown = model.models
      return Effect.isEffect(models)
        ? (models as Effect.Effect<unknown, unknown>)
        : Effect.die(new Error(`its models are ${shapeOf(models)}, not an Effect`))
    }).pipe(
      Effect.timeoutFail({
        duration: MODELS_TIMEOUT,
        onTimeout: () => failed(`did not list its models within ${Duration.format(MODELS_TIMEOUT)}`)
      }),
      Effect.flatMap((listed) =>
        Either.match(checks().models(listed), {
          onLeft: (error) => Effect.fail(failed(`listed models that are not { id, provider }: ${firstIssue(error)}`)),
          onRight: (models) => Effect.succeed(models)
        })
      ),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.failCause(cause as Cause.Cause<never>)
          : Effect.fail(asProviderError(fromCause(cause)))
      )
    )
  }
}
