// JSON Schema validation with Ajv, strict: a schema using anything draft-07 does not define fails to compile.
import { Ajv } from "ajv"

export const compileSchema = (schema: unknown) => new Ajv({ strict: true, allErrors: true }).compile(schema as object)
