import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
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
  /**
   * What the model is told of this call, after the host's "The tool call was cancelled before it
   * finished.", if it is cancelled: called from the tool's interruption finalizer, it names what the
   * stopped call left behind and where (stored with the call, so a resumed session reads it too).
   * The last text given wins. Absent in hosts older than this method.
   */
  readonly cancelledWith?: (text: string) => Effect.Effect<void>
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

// What was wrong with a tool call's arguments, in one line the model can act on: each argument
// named once with what it must be and what it was. Effect's own tree opens with the whole input
// type and repeats a union's every member; `{ limit: 0 }` would read "Expected undefined".

/** `options[1].label`, or "the arguments" for the whole object. */
const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "the arguments"
    : path
        .map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`))
        .join("")

const EXPECTED = /^Expected ([\s\S]*), actual ([\s\S]*)$/

/** A type as a person names it: a whole object's or array's type is too long to repeat. */
const typeName = (type: string): string =>
  type.startsWith("{") ? "an object" : type.startsWith("ReadonlyArray<") ? "an array" : type

/** One line naming each argument that is wrong and why, e.g. `limit must be …, got 0; path is missing`. */
const describeArgumentProblems = (error: ParseResult.ParseError): string => {
  const groups = new Map<string, Array<ParseResult.ArrayFormatterIssue>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const key = pathText(issue.path)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [issue])
    else group.push(issue)
  }
  const lines: Array<string> = []
  for (const [name, issues] of groups) {
    // An optional argument's union says it could be left out: true, and no help.
    const useful = issues.filter((issue) => !/^Expected undefined, actual /.test(issue.message))
    if (
      useful.length === 0 &&
      [...groups.keys()].some((key) => key.startsWith(`${name}.`) || key.startsWith(`${name}[`))
    )
      continue
    const shown = useful.length === 0 ? issues : useful
    const expected: Array<string> = []
    let actual: string | undefined
    const others: Array<string> = []
    for (const issue of shown) {
      const match = EXPECTED.exec(issue.message)
      if (match === null) {
        others.push(issue.message)
        continue
      }
      expected.push(typeName(match[1]!))
      actual = match[2]!
    }
    if (name === "the arguments" && expected.includes("an object")) {
      lines.push(clip(`the arguments must be a JSON object, got ${actual}`))
      continue
    }
    const parts = [...others.map((message) => `${name} ${message}`)]
    if (expected.length > 0) parts.push(`${name}: expected ${[...new Set(expected)].join(" or ")}, got ${actual}`)
    lines.push(clip(parts.join("; ")))
  }
  return lines.join("; ")
}

// The model's own value is echoed back: a 10 MB string passed for a number must not be sent again whole.
const MAX_PROBLEM_CHARS = 300
const clip = (text: string): string =>
  text.length <= MAX_PROBLEM_CHARS ? text : `${text.slice(0, MAX_PROBLEM_CHARS - 1)}…`

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
  const parameters = definition.parameters ?? jsonSchemaOf(definition.input)
  // Read on the first call, as `decode` is made.
  const ignored = onFirstCall(() => {
    const known = knownArguments(parameters)
    return (args: unknown) => ignoredArguments(args, known)
  })
  return {
    name: definition.name,
    description: definition.description,
    effect: definition.effect,
    parameters,
    execute: (args, context) => {
      const decoded = decode(args)
      if (decoded._tag === "Left") return new ToolError({ message: problem(decoded.left) })
      const note = ignored(args)
      const result = definition.run(decoded.right, context)
      return note === undefined ? result : Effect.map(result, (done) => withNote(done, note))
    },
    invalid: (args) => {
      const decoded = decode(args)
      return decoded._tag === "Left" ? problem(decoded.left) : undefined
    }
  }
}

// Arguments a tool does not take are left out rather than refused (a model adding one more is
// common and harmless), but the result says so: a model must not believe `model: "x"` took effect.

const MAX_IGNORED_NAMED = 8

const knownArguments = (parameters: JsonSchema): ReadonlySet<string> | undefined => {
  const properties = (parameters as { readonly properties?: unknown }).properties
  return typeof properties === "object" && properties !== null ? new Set(Object.keys(properties)) : undefined
}

const ignoredArguments = (args: unknown, known: ReadonlySet<string> | undefined): string | undefined => {
  if (known === undefined || typeof args !== "object" || args === null || Array.isArray(args)) return undefined
  const extra: Array<string> = []
  let count = 0
  for (const key in args) {
    if (!Object.hasOwn(args, key) || known.has(key)) continue
    count += 1
    if (extra.length < MAX_IGNORED_NAMED) extra.push(JSON.stringify(key.length <= 40 ? key : `${key.slice(0, 39)}…`))
  }
  if (count === 0) return undefined
  const more = count > extra.length ? ` and ${count - extra.length} more` : ""
  return `(${count === 1 ? "This argument was" : "These arguments were"} ignored: this tool does not take ${extra.join(", ")}${more}.)`
}

const withNote = (result: ToolResult, note: string): ToolResult => ({
  ...result,
  content: [...result.content, { _tag: "text", text: note }]
})

/** The JSON Schema of a Schema, without the `$schema` marker models do not need. */
// biome-ignore lint/suspicious/noExplicitAny: any Schema, whatever its types
export const jsonSchemaOf = (schema: Schema.Schema<any, any, never>): JsonSchema => {
  const { $schema: _, ...rest } = JSONSchema.make(schema) as unknown as JsonSchema
  return rest
}
