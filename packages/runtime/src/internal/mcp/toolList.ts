// A server's `tools/list` read tool by tool (and `prompts/list` prompt by prompt). The SDK checks the whole answer against its schema,
// so one tool with a bad input schema made the server fail to start, with zod's issues as JSON
// for a message. Here each tool is checked alone (the SDK's own rules for what matters to a
// model): the good ones are offered, each bad one is named with why (MCP-1).
import type { McpPromptInfo, McpToolInfo } from "./connection.js"

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * What one tool's definition may take of every request's context: its description is cut past
 * `MAX_DESCRIPTION` characters, and a tool whose input schema is longer than `MAX_SCHEMA` as JSON
 * is left out (a schema cannot be cut). One tool with a 2 MB description failed every run.
 */
export const MAX_DESCRIPTION = 4_000
export const MAX_SCHEMA = 30_000

const optionalString = (value: unknown): string | undefined =>
  typeof value !== "string"
    ? undefined
    : value.length <= MAX_DESCRIPTION
      ? value
      : `${value.slice(0, MAX_DESCRIPTION)}… [${value.length - MAX_DESCRIPTION} characters cut]`

/** A tool of the list that cannot be offered: its name when it has one, and why. */
export interface RefusedTool {
  readonly name?: string | undefined
  readonly message: string
}

/** Why an input schema cannot be a tool's parameters, or undefined. */
const schemaProblem = (schema: unknown): string | undefined => {
  if (!isObject(schema)) return "its input schema is not an object"
  if (schema.type !== "object")
    return `its input schema is of type ${JSON.stringify(schema.type) ?? "undefined"}, not "object"`
  if (schema.properties !== undefined && !isObject(schema.properties))
    return "the properties of its input schema are not an object"
  if (
    schema.properties !== undefined &&
    Object.values(schema.properties as object).some((property) => !isObject(property) && typeof property !== "boolean")
  ) {
    return "a property of its input schema is not a schema"
  }
  if (
    schema.required !== undefined &&
    (!Array.isArray(schema.required) || schema.required.some((name) => typeof name !== "string"))
  ) {
    return "the required of its input schema is not a list of names"
  }
  return undefined
}

const sizeProblem = (schema: unknown): string | undefined => {
  const size = JSON.stringify(schema).length
  return size <= MAX_SCHEMA
    ? undefined
    : `its input schema is ${size} characters long, more than the ${MAX_SCHEMA} a tool's may take`
}

/** The usable tools of one page of `tools/list`, and a sentence for each one that is not. */
export const readTools = (result: {
  readonly [key: string]: unknown
}): { readonly tools: ReadonlyArray<McpToolInfo>; readonly refused: ReadonlyArray<RefusedTool> } | string => {
  if (!Array.isArray(result.tools)) return "its tools/list answer is not valid MCP: it holds no list of tools"
  const tools: Array<McpToolInfo> = []
  const refused: Array<RefusedTool> = []
  for (const [index, tool] of result.tools.entries()) {
    if (!isObject(tool) || typeof tool.name !== "string" || tool.name === "") {
      refused.push({ message: `Its tool #${index + 1} has no name.` })
      continue
    }
    const problem = schemaProblem(tool.inputSchema) ?? sizeProblem(tool.inputSchema)
    if (problem !== undefined) {
      refused.push({ name: tool.name, message: `Its tool "${tool.name.slice(0, 80)}" cannot be offered: ${problem}.` })
      continue
    }
    const annotations = isObject(tool.annotations) ? tool.annotations : undefined
    tools.push({
      name: tool.name,
      title: optionalString(tool.title),
      description: optionalString(tool.description),
      inputSchema: tool.inputSchema as McpToolInfo["inputSchema"],
      annotations:
        annotations === undefined
          ? undefined
          : { readOnlyHint: annotations.readOnlyHint === true, title: optionalString(annotations.title) }
    })
  }
  return { tools, refused }
}

/** A prompt of `prompts/list` as far as it can be used (a name, arguments with names); else none. */
export const readPrompt = (prompt: unknown): ReadonlyArray<McpPromptInfo> => {
  if (!isObject(prompt) || typeof prompt.name !== "string" || prompt.name === "") return []
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : []
  return [
    {
      name: prompt.name,
      title: optionalString(prompt.title),
      description: optionalString(prompt.description),
      arguments: args.flatMap((argument) =>
        isObject(argument) && typeof argument.name === "string"
          ? [
              {
                name: argument.name,
                description: optionalString(argument.description),
                required: argument.required === true
              }
            ]
          : []
      )
    }
  ]
}

/** The most tools one server offers a model; past it, `allowedTools` chooses. */
export const MAX_TOOLS = 100

/**
 * The tools of a list to offer: the ones the settings want, at most `MAX_TOOLS`; and what could
 * not be offered, as sentences and as a count of tools. A tool the settings leave out is not
 * reported when it cannot be offered either.
 */
export const chooseTools = (
  list: { readonly tools: ReadonlyArray<McpToolInfo>; readonly refused: ReadonlyArray<RefusedTool> },
  offered: (info: McpToolInfo) => boolean
): { readonly wanted: ReadonlyArray<McpToolInfo>; readonly refused: ReadonlyArray<string>; readonly count: number } => {
  const unusable = list.refused.filter(
    (tool) => tool.name === undefined || offered({ name: tool.name, inputSchema: {} })
  )
  const refused = unusable.map((tool) => tool.message)
  const wanted = list.tools.filter(offered)
  if (wanted.length <= MAX_TOOLS) return { wanted, refused, count: unusable.length }
  refused.push(
    `It offers ${wanted.length} tools, more than the ${MAX_TOOLS} a server may offer (their definitions would fill the model's context): the first ${MAX_TOOLS} are offered; choose the ones you need with allowedTools in its settings.`
  )
  return { wanted: wanted.slice(0, MAX_TOOLS), refused, count: unusable.length + wanted.length - MAX_TOOLS }
}
