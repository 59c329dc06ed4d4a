import { jsonSchemaOf } from "@alisio/domain/Tool"
import { memoryCommand, memoryToolInputs, memoryTools } from "@alisio/plugin-memory/MemoryTools"
import { memoryCommandSpec, memoryToolSpecs } from "@alisio/plugin-memory/MemoryToolSpecs"
import { assert, describe, it } from "@effect/vitest"

describe("memory tool specs", () => {
  it("PL-5 the tools offered at start carry the JSON Schemas of the Schemas their calls are decoded with", () => {
    for (const maxContentChars of [100, 4000]) {
      const inputs = memoryToolInputs({ maxContentChars })
      assert.deepStrictEqual(
        memoryToolSpecs.map((spec) => spec.name),
        Object.keys(inputs)
      )
      for (const spec of memoryToolSpecs) {
        assert.deepStrictEqual(spec.parameters, jsonSchemaOf(inputs[spec.name as keyof typeof inputs]), spec.name)
      }
    }
  })

  it("PL-5 the offered tools and /memory are the ones that run: same names, descriptions and parameters", () => {
    const tools = memoryTools({} as never, { maxContentChars: 4000 })
    assert.deepStrictEqual(
      tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
      [...memoryToolSpecs]
    )
    const command = memoryCommand({} as never)
    assert.deepStrictEqual({ name: command.name, description: command.description }, memoryCommandSpec)
  })
})
