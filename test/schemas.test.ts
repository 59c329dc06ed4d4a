// The committed JSON Schemas and the events reference are what the code says (EV-1, CFG-1).
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { decodeRunEvent, runEventTypes } from "@alisio/domain/RunEvent"
import * as Config from "@alisio/runtime/Config"
import { configJsonSchema, runEventJsonSchema } from "@alisio/runtime/JsonSchemas"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { compileSchema } from "./support/jsonSchema.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const read = (path: string) => readFileSync(root + path, "utf8")
const committed = (file: string): unknown => JSON.parse(read(`docs/schemas/${file}`))

const remedy = "is out of date: run `pnpm schemas` and commit the result"

/** The example line of each `### \`type\`` section of docs/events.md. */
const documentedExamples = (): ReadonlyMap<string, unknown> => {
  const examples = new Map<string, unknown>()
  for (const section of read("docs/events.md").split(/^### /m).slice(1)) {
    const type = /^`([a-z_]+)`/.exec(section)?.[1]
    const example = /```json\n(.*)\n```/.exec(section)?.[1]
    if (type !== undefined && example !== undefined) examples.set(type, JSON.parse(example))
  }
  return examples
}

describe("JSON Schemas and the events reference", () => {
  it("EV-1 docs/schemas/run-event.schema.json is what the domain's Schemas generate", () => {
    assert.deepStrictEqual(committed("run-event.schema.json"), runEventJsonSchema(), `run-event.schema.json ${remedy}`)
  })

  it("CFG-1 docs/schemas/config.schema.json is what the configuration's Schema generates", () => {
    assert.deepStrictEqual(committed("config.schema.json"), configJsonSchema(), `config.schema.json ${remedy}`)
  })

  it("EV-1 docs/events.md documents every event type with an example line that decodes and validates", () => {
    const examples = documentedExamples()
    const validate = compileSchema(runEventJsonSchema())
    for (const type of runEventTypes) {
      const example = examples.get(type)
      assert.isDefined(example, `docs/events.md has no section "### \`${type}\`" with a \`\`\`json example line`)
      const decoded = decodeRunEvent(example)
      assert.isTrue(
        Either.isRight(decoded) && decoded.right._tag === "Known" && decoded.right.event.type === type,
        `the example of ${type} decodes as a ${type} event: ${JSON.stringify(Either.getLeft(decoded))}`
      )
      assert.isTrue(validate(example), `the example of ${type} validates: ${JSON.stringify(validate.errors)}`)
    }
    assert.deepStrictEqual([...examples.keys()].sort(), [...runEventTypes].sort(), "no section for an unknown type")
  })

  it("EV-2 the event schema accepts fields and event types a newer Alisio adds, and refuses a broken known event", () => {
    const validate = compileSchema(runEventJsonSchema())
    const example = documentedExamples().get("run_completed") as Record<string, unknown>
    assert.isTrue(validate({ ...example, later: 1, data: { ...(example.data as object), more: true } }))
    assert.isFalse(validate({ ...example, data: { text: "no usage" } }))
  })

  it("CFG-1 the config schema accepts a file using every key and refuses what the loader refuses", () => {
    const validate = compileSchema(configJsonSchema())
    // JSON is YAML: the loader reads the same text the schema checks.
    const loads = (config: unknown) => Either.isRight(Config.parse(JSON.stringify(config), "config.yaml"))
    const everyKey = {
      defaultModel: "local/qwen3-coder",
      providers: {
        local: {
          baseURL: "http://127.0.0.1:8080/v1",
          apiKeyEnv: "LOCAL_KEY",
          api: "chat",
          outputTokensParam: "max_tokens",
          headers: { "X-Team": "core" },
          models: { "qwen3-coder": { contextWindow: 32768, maxOutputTokens: 8192, reasoningEfforts: ["low", "high"] } }
        },
        openai: { apiKey: "sk-test" }
      },
      limits: { maxTurns: 40, timeoutMs: 600000, firstTokenRetries: 0, toolConcurrency: 2 },
      approvals: { write: "approve", external: "deny" },
      builtinPlugins: { memory: { enabled: false, injectBudgetTokens: 500 } },
      plugins: ["./my-plugin", { source: "npm:alisio-plugin-x", enabled: true, config: { level: 2 } }],
      mcpServers: {
        files: { command: "mcp-files", args: ["--root", "."] },
        web: { url: "https://127.0.0.1:9000/mcp", headers: { Authorization: "token" } },
        typed: { type: "stdio", command: "other" }
      },
      shell: { environment: { inherit: "core", exclude: ["AWS_*"], includeOnly: ["PATH"], set: { CI: "1" } } },
      titles: { summarize: true, model: "local/qwen3-coder" }
    }
    assert.isTrue(loads(everyKey))
    assert.deepStrictEqual(Either.getOrThrow(Config.parse(JSON.stringify(everyKey), "config.yaml")).warnings, [])
    assert.isTrue(validate(everyKey), JSON.stringify(validate.errors))
    for (const bad of [
      { limits: { maxTurns: 0 } },
      { limits: { maxTurns: "many" } },
      { defaultModel: "no-provider" },
      { approvals: { write: "sometimes" } },
      { titles: { summarize: "yes" } },
      { plugins: [{ enabled: true }] }
    ]) {
      assert.isFalse(loads(bad), `the loader refuses ${JSON.stringify(bad)}`)
      assert.isFalse(validate(bad), `the schema refuses ${JSON.stringify(bad)}`)
    }
  })
})
