import type * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { describeArgumentProblems } from "./ArgumentProblems.js"
import { ToolError } from "./Errors.js"
import type { RunId, SessionId, ToolCallId } from "./Ids.js"
import type { ToolResultContent } from "./Message.js"
import { onFirstCall } from "./OnFirstUse.js"

/** What a tool can change: nothing, the workspace, the world beyond it, or the host itself (TL-2). */
export const ToolEffect = Schema.Literal("read", "write", "external", "internal")
export type ToolEffect = typeof ToolEffect.Type

/** A JSON Schema object describing a tool's arguments, as sent to the model. */
export type JsonSchema = { readonly [key: string]: unknown }

/** The tool as the model sees it. */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
}

/** What a tool returns to the model. */
export interface ToolResult {
  readonly content: ReadonlyArray<ToolResultContent>
  readonly isError?: boolean
}

/** What a tool handler knows about the call it serves. */
export interface ToolContext {
  readonly sessionId: SessionId
  readonly runId: RunId
  readonly toolCallId: ToolCallId
  readonly cwd: string
  readonly readOnly: boolean
  /** Streams a piece of output to observers as `tool_progress` (never stored). */
  readonly progress: (text: string) => Effect.Effect<void>
  /**
   * Asks for access to a path outside the workspace (TL-3): succeeds when it is inside, or when a
   * person (or the policy) approves; fails with a `ToolError` the model sees when denied. The wait
   * on a person pauses the run's clock (LIM-1).
   */
  readonly approveExternalPath: (path: string) => Effect.Effect<void, ToolError>
  /** Asks the person a question (`ask_user_question`); fails with a `ToolError` when nobody can answer. */
  readonly askUser: (question: UserQuestion) => Effect.Effect<string, ToolError>
  /**
   * Puts a plan (Markdown) to the person before the work starts (plan review): approved, or sent
   * back with what to change. Fails with a `ToolError` when nobody can review it. Absent in hosts
   * older than this method.
   */
  readonly reviewPlan?: (plan: string) => Effect.Effect<PlanDecision, ToolError>
}

/** What the person said of a plan. */
export interface PlanDecision {
  readonly approved: boolean
  readonly feedback?: string | undefined
}

/** A question for the person running the agent, with optional suggested answers. */
export interface UserQuestion {
  readonly question: string
  readonly options?: ReadonlyArray<string>
}

/**
 * A tool: its spec, effect and handler. Arguments arrive as parsed JSON, not yet validated. A
 * plugin's tool may fail with its own errors (`E`); the host tells the model their message.
 */
export interface Tool<R = never, E = ToolError> extends ToolSpec {
  readonly effect: ToolEffect
  readonly execute: (args: unknown, context: ToolContext) => Effect.Effect<ToolResult, E, R>
  /**
   * What is wrong with `args`, or undefined when they are valid: the host checks it before it asks
   * anyone to approve the call, so that no one approves a call that cannot run.
   */
  readonly invalid?: (args: unknown) => string | undefined
}

/** A result holding one text part. */
export const textResult = (text: string, options?: { readonly isError?: boolean }): ToolResult =>
  options?.isError === true
    ? { content: [{ _tag: "text", text }], isError: true }
    : { content: [{ _tag: "text", text }] }

/** Builds a tool whose arguments are validated by `input`; a bad argument becomes a `ToolError` the model sees. */
export const defineTool = <A, I, R, E = ToolError>(definition: {
  readonly name: string
  readonly description: string
  readonly effect: ToolEffect
  readonly input: Schema.Schema<A, I, never>
  /** Defaults to the JSON Schema derived from `input`. */
  readonly parameters?: JsonSchema
  readonly run: (input: A, context: ToolContext) => Effect.Effect<ToolResult, E, R>
}): Tool<R, E | ToolError> => {
  // Compiled on the first call: a run calls a few of the tools it offers.
  const decode = onFirstCall(() =>
    Schema.decodeUnknownEither(definition.input, { errors: "all", onExcessProperty: "ignore" })
  )
  const problem = (left: ParseResult.ParseError) =>
    `Invalid arguments for ${definition.name}: ${describeArgumentProblems(left)}. Call it again with arguments that match its input schema.`
  return {
    name: definition.name,
    description: definition.description,
    effect: definition.effect,
    parameters: definition.parameters ?? jsonSchemaOf(definition.input),
    execute: (args, context) => {
      const decoded = decode(args)
      if (decoded._tag === "Left") return new ToolError({ message: problem(decoded.left) })
      return definition.run(decoded.right, context)
    },
    invalid: (args) => {
      const decoded = decode(args)
      return decoded._tag === "Left" ? problem(decoded.left) : undefined
    }
  }
}

/** The JSON Schema of a Schema, without the `$schema` marker models do not need. */
// biome-ignore lint/suspicious/noExplicitAny: any Schema, whatever its types
export const jsonSchemaOf = (schema: Schema.Schema<any, any, never>): JsonSchema => {
  const { $schema: _, ...rest } = JSONSchema.make(schema) as unknown as JsonSchema
  return rest
}
