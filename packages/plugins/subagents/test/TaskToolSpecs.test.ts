import { jsonSchemaOf } from "@alisio/domain/Tool"
import { agentsCommand } from "@alisio/plugin-subagents/AgentsCommand"
import { taskToolInputs, taskTools } from "@alisio/plugin-subagents/TaskTools"
import { agentsCommandSpec, taskToolSpecs } from "@alisio/plugin-subagents/TaskToolSpecs"
import { assert, describe, it } from "@effect/vitest"

describe("task tool specs", () => {
  it("CH-4 the tools offered at start carry the JSON Schemas of the Schemas their calls are decoded with", () => {
    assert.deepStrictEqual(
      taskToolSpecs.map((spec) => spec.name),
      Object.keys(taskToolInputs)
    )
    for (const spec of taskToolSpecs) {
      assert.deepStrictEqual(
        spec.parameters,
        jsonSchemaOf(taskToolInputs[spec.name as keyof typeof taskToolInputs]),
        spec.name
      )
    }
  })

  it("CH-4 the offered tools and /agents are the ones that run: same names, descriptions and parameters", () => {
    const tools = taskTools({} as never)
    assert.deepStrictEqual(
      tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
      [...taskToolSpecs]
    )
    const command = agentsCommand({} as never, {} as never)
    assert.deepStrictEqual({ name: command.name, description: command.description }, agentsCommandSpec)
  })
})
