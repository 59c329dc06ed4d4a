import { formatJsonSchema, runEventJsonSchema } from "@alisio/runtime/JsonSchemas"
import * as Effect from "effect/Effect"

/** `alisio events schema`: the JSON Schema of a `run --json` line, from the domain's Schemas (EV-1). */
export const eventsSchema = Effect.sync(() => {
  process.stdout.write(formatJsonSchema(runEventJsonSchema()))
})
