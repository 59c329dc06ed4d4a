import { jsonSchemaOf } from "@alisio/domain/Tool"
import { memoryCommandSpec, memoryToolSpecs } from "@alisio/plugin-memory/MemoryToolSpecs"
import { memoryCommand, memoryToolInputs, memoryTools } from "@alisio/plugin-memory/MemoryTools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { defaultMemoryConfig, readSettings } from "../src/internal/settings.js"
import { MemoryConfig } from "../src/MemoryConfig.js"

describe("memory tool specs", () => {
  it("PL-5 the tools offered at start carry the JSON Schemas of the Schemas their calls are decoded with", () => {
    for (const maxContentChars of [100, 4000]) {
      const inputs = memoryToolInputs({ maxContentChars })
      assert.deepStrictEqual(
        Object.values(memoryToolSpecs).map((spec) => spec.name),
        Object.keys(inputs)
      )
      for (const [key, spec] of Object.entries(memoryToolSpecs)) {
        assert.strictEqual(spec.name, key)
        assert.deepStrictEqual(spec.parameters, jsonSchemaOf(inputs[spec.name as keyof typeof inputs]), spec.name)
      }
    }
  })

  it("PL-5 the offered tools and /memory are the ones that run: same names, descriptions and parameters", () => {
    const tools = memoryTools({} as never, { maxContentChars: 4000 }, memoryToolSpecs)
    assert.deepStrictEqual(
      tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
      Object.values(memoryToolSpecs)
    )
    const command = memoryCommand({} as never, memoryCommandSpec)
    assert.deepStrictEqual({ name: command.name, description: command.description }, memoryCommandSpec)
  })
})

describe("memory settings", () => {
  it.effect(
    "PL-5 without settings the plugin runs with the Schema's defaults; a bad one is still a one-line error",
    () =>
      Effect.gen(function* () {
        const config = (raw: unknown) => Effect.map(readSettings("memory", raw), (read) => read.config)
        assert.deepStrictEqual(yield* config({}), Schema.decodeUnknownSync(MemoryConfig)({}))
        assert.deepStrictEqual(yield* config(undefined), defaultMemoryConfig)
        assert.deepStrictEqual((yield* config({ maxContentChars: 500 })).maxContentChars, 500)
        const error = yield* Effect.flip(readSettings("memory", { maxContentChars: 1 }))
        assert.strictEqual(
          error.message,
          "builtinPlugins.memory.maxContentChars: expected a whole number from 100 to 1000000, got 1 (in config.yaml, global or project)"
        )
      })
  )
})
