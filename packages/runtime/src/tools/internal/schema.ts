import * as Schema from "effect/Schema"

const formatActual = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * An integer argument of at least `minimum`. The JSON Schema is written out so models get a
 * plain `{ type: "integer" }` rather than `$ref`s into Effect's definitions.
 */
export const integerAtLeast = (minimum: number, description: string) =>
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(minimum)).annotations({
    description,
    message: (issue) => ({
      message:
        typeof issue.actual === "number" && issue.actual > Number.MAX_SAFE_INTEGER
          ? `must be a whole number from ${minimum} to ${Number.MAX_SAFE_INTEGER}, got ${formatActual(issue.actual)}`
          : `must be a whole number of at least ${minimum}, got ${formatActual(issue.actual)}`,
      override: true
    }),
    jsonSchema: { type: "integer", minimum, description }
  })

/** A string argument with something other than whitespace in it. */
export const nonBlankString = (description: string) =>
  Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0, { message: () => "must not be blank" })
  ).annotations({ description, jsonSchema: { type: "string", description } })

/** A command line bash can receive: not blank, and free of NUL characters, which no argument can carry. */
export const commandLine = (description: string) =>
  nonBlankString(description).pipe(
    Schema.filter((text) => !text.includes("\0"), {
      message: () => "holds a NUL character (\\u0000), which a command line cannot carry"
    })
  )
