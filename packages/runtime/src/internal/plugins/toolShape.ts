// What a plugin's tool must be before it is offered (PL-6, TL-2): a plugin is written in
// JavaScript too, so a tool may come with an effect no approval policy knows (it would run
// unasked), a schema that cannot be sent to a model, or no handler.

import { ToolEffect } from "@alisio/domain/Tool"
import * as Schema from "effect/Schema"

const isEffect = Schema.is(ToolEffect)

const isPlainObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Why the schema cannot be sent to a model as a tool's parameters, or undefined. */
const schemaDefect = (parameters: unknown): string | undefined => {
  if (!isPlainObject(parameters)) return "are not a JSON Schema object"
  if (parameters.type !== undefined && parameters.type !== "object") {
    return `are a JSON Schema of type ${JSON.stringify(parameters.type)}, not "object"`
  }
  try {
    JSON.stringify(parameters)
  } catch (error) {
    return `cannot be written as JSON (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`
  }
  return undefined
}

/**
 * Why `tool` cannot be registered as it is, as a sentence naming the remedy; undefined when it
 * can. Its name is checked where it is prefixed (`ToolOrigins.prepare`).
 */
export const toolDefect = (tool: unknown): string | undefined => {
  if (!isPlainObject(tool)) return `A tool must be an object ({ name, description, effect, parameters, execute }).`
  const name = typeof tool.name === "string" ? `"${tool.name.slice(0, 80)}"` : "without a name"
  if (!isEffect(tool.effect)) {
    return `The tool ${name} has the effect ${JSON.stringify(tool.effect) ?? "undefined"}: use "read", "write", "external" or "internal" (it decides when a person is asked).`
  }
  if (typeof tool.description !== "string") {
    return `The tool ${name} has no description: give it a string telling the model what it does.`
  }
  const schema = schemaDefect(tool.parameters)
  if (schema !== undefined) {
    return `The parameters of the tool ${name} ${schema}: give { type: "object", properties: … } (defineTool derives it from a Schema).`
  }
  if (typeof tool.execute !== "function") return `The tool ${name} has no execute function.`
  return undefined
}
