// The task records the plugin keeps in its state, read again by a later process (CH-4): `/agents`
// of a session lists every task it started, whenever in the run each one was started.
import * as path from "node:path"
import * as Fake from "@alisio/providers/FakeProvider"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Runner } from "@alisio/runtime/Runner"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { agentOf, subagentsLayer, tempDir } from "./support/subagentsHost.js"

/** The root asks for one task a turn, three turns running, then answers. */
const oneTaskATurn: Fake.Script = (request) => {
  if (agentOf(request) !== undefined) return Fake.answer(`report of ${agentOf(request)}`)
  const done = request.messages.filter((m) => m.role === "tool").length
  if (done === 3) return Fake.answer("all reported")
  return Fake.callTools({
    id: `t${done}`,
    name: "task",
    args: { description: `job ${done}`, prompt: `do job ${done}`, subagent_type: "explore" }
  })
}

describe("task records", () => {
  it.scoped("CH-4 /agents in a later process lists every task of the session, those of later turns too", () =>
    Effect.gen(function* () {
      const root = yield* tempDir
      const filename = path.join(root, "alisio.db")
      const homes = {
        state: path.join(root, "state"),
        config: path.join(root, "config"),
        cache: path.join(root, "cache")
      }
      const host = (script: Fake.Script) => subagentsLayer({ script, store: SessionStore.layer({ filename }), homes })

      const outcome = yield* Effect.flatMap(Runner, (runner) =>
        runner.run({ cwd: root, prompt: "root", model: "fake-model" })
      ).pipe(Effect.provide(host(oneTaskATurn)))
      assert.strictEqual(outcome.status, "completed")

      // The first process has closed; a second one reads what it kept.
      const listing = yield* Effect.flatMap(PluginHost.PluginHost, (plugins) =>
        plugins.commands.run("agents", "", { sessionId: outcome.sessionId, cwd: root })
      ).pipe(Effect.provide(host([])))
      const rows = listing.split("\n").slice(1)
      assert.deepStrictEqual(
        rows.map((row) => row.split(/ {2,}/).slice(1, 3).join(" ")),
        ["completed explore", "completed explore", "completed explore"],
        listing
      )
    })
  )
})
