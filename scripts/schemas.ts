// `pnpm schemas`: rewrites the committed JSON Schemas from the Schemas they describe. A test
// (test/schemas.test.ts) fails while a committed file differs from what this would write.
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { configJsonSchema, formatJsonSchema, runEventJsonSchema } from "@alisio/runtime/JsonSchemas"

const folder = fileURLToPath(new URL("../docs/schemas/", import.meta.url))
for (const [file, schema] of [
  ["config.schema.json", configJsonSchema()],
  ["run-event.schema.json", runEventJsonSchema()]
] as const) {
  writeFileSync(folder + file, formatJsonSchema(schema))
  process.stdout.write(`wrote docs/schemas/${file}\n`)
}
