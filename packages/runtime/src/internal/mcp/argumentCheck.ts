// The check of an MCP tool's arguments against its input schema, before the call (MCP-1). The
// schema is the server's and the arguments are the model's, and Ajv runs on the main thread: a
// `pattern` that backtracks (`(a+)+$`) met by a string the model wrote, or `uniqueItems` over a
// long array, held the event loop, so neither Ctrl-C nor the run's timeout could end the run
// (TL-6). A check whose schema holds such keywords runs under a `vm` timeout, which V8 enforces
// inside a regular expression too; the others run as they are (a watchdog costs a call ~0.5 ms).
import { createContext, Script } from "node:vm"
import { AjvJsonSchemaValidator } from "./thirdParty.js"

/** The longest a check may take before the call is refused as uncheckable. */
export const CHECK_LIMIT_MS = 1_000

/** A check's verdict: valid, or why not; `timedOut` when it was stopped at `CHECK_LIMIT_MS`. */
export interface Verdict {
  readonly valid: boolean
  readonly errorMessage?: string | undefined
  readonly timedOut?: boolean | undefined
}

export type Check = (input: unknown) => Verdict

// One validator for every server: compiled schemas are cached per tool, by `checkerFor`.
let validatorProvider: AjvJsonSchemaValidator | undefined

// Keywords whose cost grows faster than their input (regular expressions, pairwise comparison).
const costly = /"(?:pattern|patternProperties|format|uniqueItems)"/

const bounded = (check: Check): Check => {
  const context = createContext({ check, input: undefined as unknown })
  const script = new Script("check(input)")
  return (input) => {
    context.input = input
    try {
      return script.runInContext(context, { timeout: CHECK_LIMIT_MS }) as Verdict
    } catch (error) {
      if ((error as { readonly code?: unknown }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw error
      return { valid: false, timedOut: true }
    } finally {
      context.input = undefined
    }
  }
}

/**
 * The check of a tool's arguments, compiled on first use. A schema the validator cannot compile
 * (an unknown draft, a broken `$ref`) checks nothing: the server judges the call itself. `$schema`
 * and `$id` are dropped: Ajv keeps every schema with an `$id` under it for the whole process, so a
 * second tool (of any server) with the same `$id` was checked against the first one's schema.
 */
export const checkerFor = (schema: { readonly [key: string]: unknown }): (() => Check | undefined) => {
  let compiled: Check | undefined | null = null
  return () => {
    if (compiled !== null) return compiled
    try {
      validatorProvider ??= new AjvJsonSchemaValidator()
      const { $schema: _, $id: __, ...rest } = schema
      const check = validatorProvider.getValidator(rest as never) as Check
      compiled = costly.test(JSON.stringify(rest)) ? bounded(check) : check
    } catch {
      compiled = undefined
    }
    return compiled
  }
}
