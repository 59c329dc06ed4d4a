import { builtinTools } from "@alisio/runtime/tools/BuiltinTools"
import { assert, describe, it } from "@effect/vitest"

describe("builtinTools", () => {
  it("TL-1 TL-2 lists the builtin tools, each with its effect and an object schema for its arguments", () => {
    const tools = builtinTools()
    assert.deepStrictEqual(
      tools.map((tool) => [tool.name, tool.effect]),
      [
        ["read", "read"],
        ["write", "write"],
        ["edit", "write"],
        ["ls", "read"],
        ["glob", "read"],
        ["grep", "read"],
        ["bash", "external"],
        ["ask_user_question", "internal"]
      ]
    )
    for (const tool of tools) {
      assert.strictEqual(tool.parameters.type, "object", tool.name)
      assert.isAbove(tool.description.length, 20, tool.name)
      // Plain schemas: some OpenAI-compatible servers reject `$ref`s in tool parameters.
      assert.notInclude(JSON.stringify(tool.parameters), "$ref", tool.name)
    }
    const read = tools[0]!
    assert.deepStrictEqual(read.parameters.required, ["path"])
    assert.deepInclude(read.parameters.properties as object, {
      path: { type: "string", description: "The file, relative to the workspace (or absolute)." }
    })
  })

  it("TL-1 passes caps and timeouts to the tools", () => {
    const bash = builtinTools({ bash: { defaultTimeoutMs: 1_234 } }).find((tool) => tool.name === "bash")!
    assert.include(bash.description, "Timeout 1234 ms")
  })
})
