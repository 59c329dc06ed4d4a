// The agents listed in the system context (CH-4).
import { assert, describe, it } from "@effect/vitest"
import { agentListing } from "../src/AgentListing.js"

describe("agent listing", () => {
  it("CH-4 a few agents are listed with the first line of their description", () => {
    assert.strictEqual(
      agentListing([
        { name: "fixer", description: "Fixes tests.\nMore about it." },
        { name: "general", description: "General-purpose agent." }
      ]),
      "Subagents you can delegate to with the task tool (subagent_type: description):\n" +
        "- fixer: Fixes tests.\n- general: General-purpose agent."
    )
  })

  it("CH-4 600 agents with long descriptions fit the plugin's context, every one named, the builtins too", () => {
    const agents = [
      ...Array.from({ length: 600 }, (_, i) => ({ name: `agent${i}`, description: `${"d".repeat(300)} ${i}` })),
      { name: "general", description: "General-purpose agent." },
      { name: "explore", description: "Fast read-only codebase search." },
      { name: "plan", description: "Read-only planner." }
    ]
    const listing = agentListing(agents)
    assert.isAtMost(listing.length, 16_000, "the host cuts a plugin's context past 16 000 characters")
    assert.isTrue(
      agents.every((agent) => new RegExp(`(- |: |, )${agent.name}(:|,|$)`).test(listing)),
      "every agent is named"
    )
    assert.match(listing, /- agent0: d{199}…\n/)
    assert.match(listing, /\n- also \(no room for their descriptions; \/agents defs shows them\): agent\d+, /)
  })
})
