// End-to-end: a buggy external plugin never breaks the CLI's output (PL-6).

import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { isTerminalType } from "@alisio/domain/RunEvent"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, startOpenAiServer } from "./support/openaiServer.js"
import { writePluginPackage } from "./support/pluginPackage.js"

/** A single-file plugin that prints at import, in setup and in its tool. */
const noisyPlugin = `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

console.log("printed at import")

export default definePlugin({
  id: "noisy",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    process.stdout.write("printed in setup\\n")
    yield* api.tools.register(defineTool({
      name: "shout",
      description: "Shouts",
      effect: "read",
      input: Schema.Struct({}),
      run: () => Effect.sync(() => {
        console.log("printed by the tool")
        return textResult("shouted")
      })
    }))
  })
})
`

/** A single-file plugin that prints from callbacks it scheduled: timers, immediates, promises, events. */
const laterPlugin = `import { EventEmitter } from "node:events"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

setTimeout(() => process.stdout.write("junk from an import timer\\n"))
setTimeout(console.log, 0, "junk from a bare console.log timer")
const bus = new EventEmitter()
bus.on("tick", () => console.log("junk from an event"))

export default definePlugin({
  id: "later",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* Effect.acquireRelease(
      Effect.sync(() => setInterval(() => process.stdout.write("junk from an interval\\n"), 5)),
      (interval) => Effect.sync(() => clearInterval(interval))
    )
    yield* api.tools.register(defineTool({
      name: "schedule",
      description: "Schedules output",
      effect: "read",
      input: Schema.Struct({}),
      run: () => Effect.sync(() => {
        setTimeout(() => process.stdout.write("junk from a timer\\n"))
        setImmediate(() => console.log("junk from an immediate"))
        Promise.resolve().then(() => process.stdout.write("junk from a promise\\n"))
        queueMicrotask(() => bus.emit("tick"))
        setTimeout(process.stdout.write.bind(process.stdout), 0, "junk from a bound write\\n")
        return textResult("scheduled")
      }).pipe(
        Effect.tap(() => Console.log("junk from Console.log")),
        Effect.tap(() => Effect.forkDaemon(Effect.delay(Console.log("junk from a forked fiber"), "5 millis"))),
        // An event the host emits and writes while it serves the plugin's fiber stays on stdout.
        Effect.tap(() => api.decisions.completed({ decisionId: "d-1", provider: "rules", latencyMs: 1, decisionCount: 1, rejectedCount: 0, confidenceMin: 1 }))
      )
    }))
  })
})
`

/** A single-file plugin whose tool ends the process. */
const quitterPlugin = `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export default definePlugin({
  id: "quitter",
  version: "1.0.0",
  setup: Effect.flatMap(PluginApi, (api) =>
    api.tools.register(defineTool({
      name: "quit",
      description: "Quits",
      effect: "read",
      input: Schema.Struct({}),
      run: () => Effect.sync(() => process.exit(0))
    }))
  )
})
`

/** A plugin that leaves an unref'd interval writing to stdout after its host has closed. */
const leftoverPlugin = `import { definePlugin } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"

export default definePlugin({
  id: "leftover",
  version: "1.0.0",
  setup: Effect.sync(() => {
    setInterval(() => process.stdout.write("junk from a leftover interval\\n"), 1).unref()
  })
})
`

/** The lines of `stdout` that are not JSON. */
const notJson = (stdout: string): ReadonlyArray<string> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .filter((line) => {
      try {
        JSON.parse(line)
        return false
      } catch {
        return true
      }
    })

describe("hostile plugins (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })

  it("PL-6 what a plugin prints goes to stderr: `run --json` stdout stays JSONL, `run` stdout is the answer", async () => {
    server = await startOpenAiServer({
      replyFor: (_request, index) =>
        index % 2 === 0
          ? { kind: "tool", id: `call_${index}`, name: "p_acd6beff7c_shout", args: {} }
          : { kind: "text", text: "fine" }
    })
    sandbox = makeSandbox(server.baseURL)
    const plugin = join(sandbox.home, "..", "noisy.mjs")
    writeFileSync(plugin, noisyPlugin)
    const json = await sandbox.run(["run", "--json", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.deepStrictEqual(notJson(json.stdout), [])
    assert.include(json.stdout, '"shouted"')
    for (const printed of ["printed at import", "printed in setup", "printed by the tool"]) {
      assert.include(json.stderr, printed)
    }
    const text = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.strictEqual(text.stdout, "fine\n")
  }, 60_000)

  it("PL-6 what a plugin prints from a timer, an immediate or a promise it scheduled goes to stderr: every `run --json` stdout line is JSON", async () => {
    server = await startOpenAiServer({
      // The answer comes slowly: the plugin's callbacks fire while the run still writes its events.
      replyFor: (_request, index) =>
        index % 2 === 0
          ? { kind: "tool", id: `call_${index}`, name: "p_1d9283d848_schedule", args: {} }
          : { kind: "text", text: "fine", delayMs: 50 }
    })
    sandbox = makeSandbox(server.baseURL)
    const plugin = join(sandbox.home, "..", "later.mjs")
    writeFileSync(plugin, laterPlugin)
    const json = await sandbox.run(["run", "--json", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.deepStrictEqual(notJson(json.stdout), [])
    assert.include(json.stdout, '"scheduled"')
    assert.include(json.stdout, '"decision_completed"')
    assert.notInclude(json.stderr, '"schemaVersion"')
    for (const junk of [
      "an import timer",
      "an interval",
      "a timer",
      "an immediate",
      "a promise",
      "an event",
      "a bare console.log timer",
      "a bound write",
      "Console.log",
      "a forked fiber"
    ]) {
      assert.include(json.stderr, `junk from ${junk}`)
    }
  }, 60_000)

  it("PL-6 what a timer a plugin left running prints after its host closed goes to stderr: `run --json` stdout is JSONL ending with the terminal event", async () => {
    server = await startOpenAiServer({ replies: [{ kind: "text", text: "fine" }] })
    sandbox = makeSandbox(server.baseURL)
    const plugin = join(sandbox.home, "..", "leftover.mjs")
    writeFileSync(plugin, leftoverPlugin)
    const json = await sandbox.run(["run", "--json", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.deepStrictEqual(notJson(json.stdout), [])
    const last = JSON.parse(json.stdout.trimEnd().split("\n").at(-1) ?? "null") as { readonly type: string }
    assert.isTrue(isTerminalType(last.type), last.type)
    assert.include(json.stderr, "junk from a leftover interval")
  }, 60_000)

  it("PL-6 a tool calling process.exit is the plugin's crash: the run goes on and its session is kept", async () => {
    server = await startOpenAiServer({
      replies: [
        { kind: "tool", id: "call_1", name: "p_efc6037882_quit", args: {} },
        { kind: "text", text: "still here" },
        { kind: "text", text: "resumed" }
      ]
    })
    sandbox = makeSandbox(server.baseURL)
    const plugin = join(sandbox.home, "..", "quitter.mjs")
    writeFileSync(plugin, quitterPlugin)
    const result = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "still here\n")
    assert.include(
      result.stderr,
      "alisio: warning: plugin quitter: The tool quit of the plugin quitter crashed: it called process.exit(0), which plugins may not do; Alisio goes on"
    )
    const resumed = await sandbox.run(["run", "--continue", "-m", "openai/test-model", "again"])
    assert.strictEqual(resumed.stdout, "resumed\n", resumed.stderr)
  }, 60_000)

  it("PL-6 a plugin whose JavaScript does not parse is one line naming the file, line and column; the run goes on", async () => {
    server = await startOpenAiServer({ replies: [1, 2, 3].map(() => ({ kind: "text", text: "fine" }) as const) })
    sandbox = makeSandbox(server.baseURL)
    const entryBroken = writePluginPackage(sandbox.home, "../entry-broken", {
      name: "entry-broken",
      source: 'import * as Effect from "effect/Effect"\nconst x = {\n  a: 1,\n  b: 2 3\n}\nexport default {}\n'
    })
    const importsBroken = writePluginPackage(sandbox.home, "../imports-broken", {
      name: "imports-broken",
      source: 'import "./lib/helper.js"\nexport default {}\n',
      files: { "lib/helper.js": "export const f = () => {\n\treturn )\n}\n" }
    })
    for (const [plugin, where, message] of [
      [entryBroken, `${join(entryBroken, "index.js")}:4:8`, "Unexpected number"],
      [importsBroken, `${join(importsBroken, "lib", "helper.js")}:2:9`, "Unexpected token ')'"]
    ] as const) {
      const result = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "hi"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "fine\n")
      assert.deepStrictEqual(
        result.stderr.split("\n").filter((line) => line.includes(message) || line.includes("    at ")),
        [`alisio: warning: plugin ${plugin}: syntax error at ${where}: ${message}`]
      )
    }
    // A SyntaxError the plugin's code throws as it runs is no syntax error of its file.
    const parsesJson = writePluginPackage(sandbox.home, "../parses-json", {
      name: "parses-json",
      source: 'JSON.parse("{")\nexport default {}\n'
    })
    const thrown = await sandbox.run(["run", "--plugin", parsesJson, "-m", "openai/test-model", "hi"])
    assert.include(
      thrown.stderr,
      `alisio: warning: plugin ${parsesJson}: could not be imported from ${join(parsesJson, "index.js")}: Expected property name`
    )
  }, 60_000)

  it("LIM-1 PL-6 a plugin command that never ends, run as `alisio run /x`, ends on Ctrl-C with 130", async () => {
    server = await startOpenAiServer({ replies: [] })
    sandbox = makeSandbox(server.baseURL)
    const plugin = join(sandbox.home, "..", "waiter.mjs")
    writeFileSync(
      plugin,
      `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
export default definePlugin({ id: "waiter", version: "1.0.0", setup: Effect.flatMap(PluginApi, (api) =>
  api.commands.register({ name: "wait", description: "Waits", execute: () =>
    Effect.zipRight(Effect.sync(() => process.stderr.write("waiting\\n")), Effect.promise(() => new Promise(() => { setInterval(() => {}, 1000) })))
  })
) })
`
    )
    const running = sandbox.start(["run", "--plugin", plugin, "-m", "openai/test-model", "/waiter:wait"])
    await running.waitFor("waiting")
    running.child.kill("SIGINT")
    const result = await running.done
    assert.strictEqual(result.code, 130, result.stderr)
  }, 60_000)
})
