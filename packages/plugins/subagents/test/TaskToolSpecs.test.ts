import { jsonSchemaOf } from "@alisio/domain/Tool"
import { agentsCommand } from "@alisio/plugin-subagents/AgentsCommand"
import { agentsCommandSpec, taskToolSpecs } from "@alisio/plugin-subagents/TaskToolSpecs"
import { taskToolInputs, taskTools } from "@alisio/plugin-subagents/TaskTools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { defaultSubagentsConfig, readSettings } from "../src/internal/settings.js"
import { SubagentsConfig } from "../src/SubagentsConfig.js"

describe("task tool specs", () => {
  it("CH-4 the tools offered at start carry the JSON Schemas of the Schemas their calls are decoded with", () => {
    assert.deepStrictEqual(
      Object.values(taskToolSpecs).map((spec) => spec.name),
      Object.keys(taskToolInputs)
    )
    for (const [key, spec] of Object.entries(taskToolSpecs)) {
      assert.strictEqual(spec.name, key)
      assert.deepStrictEqual(
        spec.parameters,
        jsonSchemaOf(taskToolInputs[spec.name as keyof typeof taskToolInputs]),
        spec.name
      )
    }
  })

  it("CH-4 the offered tools and /agents are the ones that run: same names, descriptions and parameters", () => {
    const tools = taskTools({} as never, taskToolSpecs)
    assert.deepStrictEqual(
      tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
      Object.values(taskToolSpecs)
    )
    const command = agentsCommand({} as never, agentsCommandSpec)
    assert.deepStrictEqual({ name: command.name, description: command.description }, agentsCommandSpec)
  })
})

describe("subagents settings", () => {
  it.effect(
    "CH-4 without settings the plugin runs with the Schema's defaults; a bad one is still a one-line error",
    () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* readSettings("subagents", {}), Schema.decodeUnknownSync(SubagentsConfig)({}))
        assert.deepStrictEqual(yield* readSettings("subagents", undefined), defaultSubagentsConfig)
        assert.deepStrictEqual((yield* readSettings("subagents", { maxDepth: 5 })).maxDepth, 5)
        const error = yield* Effect.flip(readSettings("subagents", { maxDepth: 0 }))
        assert.match(error.message, /^builtinPlugins\.subagents\.maxDepth: .*\. Fix it in config\.yaml\.$/)
      })
  )
})
