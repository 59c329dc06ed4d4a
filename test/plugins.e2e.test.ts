// End-to-end: plugins in the bundled CLI (PL-1…PL-6, EX-3), against the OpenAI-protocol test server.

import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { type CliSandbox, makeSandbox } from "./support/cli.js"
import { type OpenAiTestServer, type RecordedRequest, type Reply, startOpenAiServer } from "./support/openaiServer.js"
import { weatherPluginSource, writePluginPackage } from "./support/pluginPackage.js"

const weatherTool = "p_e5e72beb4e_forecast"

const chats = (server: OpenAiTestServer) => server.requests.filter((r) => r.path.endsWith("/chat/completions"))

/** The tool results a request carries, in order. */
const toolResults = (request: RecordedRequest): ReadonlyArray<string> =>
  (request.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content))

const offeredTools = (request: RecordedRequest): ReadonlyArray<string> =>
  ((request.body.tools ?? []) as ReadonlyArray<{ function: { name: string } }>).map((tool) => tool.function.name)

const systemOf = (request: RecordedRequest): string =>
  String((request.body.messages ?? []).find((m) => m.role === "system")?.content ?? "")

/** A plugin whose import leaves a file behind: proof that it was imported at all. */
const markerPlugin = (marker: string, id: string) => `import { writeFileSync } from "node:fs"
import { definePlugin } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"

writeFileSync(${JSON.stringify(marker)}, "imported")

export default definePlugin({ id: ${JSON.stringify(id)}, version: "1.0.0", setup: Effect.void })
`

/** A plugin whose tool reports a decision (EV-6), with state that must not reach the store. */
const deciderPlugin = `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import { defineTool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export default definePlugin({
  id: "decider",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* api.tools.register(defineTool({
      name: "decide",
      description: "Decides",
      effect: "read",
      input: Schema.Struct({}),
      run: () => Effect.as(
        api.decisions.completed({ decisionId: "d-1", provider: "rules", latencyMs: 9, decisionCount: 2, rejectedCount: 0, confidenceMin: 0.9, state: "secret" }),
        textResult("decided")
      )
    }))
  })
})
`

const eventTypes = (jsonl: string): ReadonlyArray<string> =>
  jsonl
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { type: string }).type)

describe("plugins (end to end)", () => {
  let server: OpenAiTestServer | undefined
  let sandbox: CliSandbox | undefined
  const setup = async (options: {
    readonly replies?: ReadonlyArray<Reply>
    readonly replyFor?: (request: RecordedRequest, index: number) => Reply
  }) => {
    server = await startOpenAiServer(options)
    sandbox = makeSandbox(server.baseURL)
    return { server, sandbox }
  }
  beforeEach(() => {
    server = undefined
    sandbox = undefined
  })
  afterEach(async () => {
    await server?.close()
    sandbox?.cleanup()
  })

  const forecastRun: ReadonlyArray<Reply> = [
    { kind: "tool", id: "call_1", name: weatherTool, args: { city: "Lisbon" } },
    { kind: "tool", id: "call_2", name: weatherTool, args: { city: "Atlantis" } },
    { kind: "tool", id: "call_3", name: weatherTool, args: { city: "Nowhere" } },
    { kind: "text", text: "Lisbon is sunny." }
  ]

  const assertOneRuntime = (server: OpenAiTestServer, stderr: string, plugin: string) => {
    const last = chats(server).at(-1)!
    assert.deepStrictEqual(toolResults(last), [
      "Lisbon: sunny, 24 °C",
      "CityNotFound: No forecast for Atlantis",
      "Nowhere is not a city."
    ])
    assert.include(stderr, "[weather] host PluginError is mine: true")
    assert.strictEqual(readFileSync(join(plugin, "interrupted.txt"), "utf8"), "interrupted")
  }

  it("PL-1 PL-3 PRV-3 a plugin package with its own node_modules, installed with `plugins install`, runs as one runtime with the bundled CLI; `plugins remove` takes it out", async () => {
    const { sandbox, server } = await setup({ replies: forecastRun })
    const plugin = writePluginPackage(sandbox.home, "../weather-src", {
      name: "alisio-plugin-weather",
      source: weatherPluginSource
    })
    mkdirSync(sandbox.home, { recursive: true })
    writeFileSync(join(sandbox.home, "config.yaml"), "# my settings\nlimits:\n  maxTurns: 9 # enough\n")
    const installed = await sandbox.run(["plugins", "install", plugin])
    assert.strictEqual(installed.code, 0, installed.stderr)
    assert.include(installed.stdout, "Installed alisio-plugin-weather@1.0.0")
    assert.strictEqual(
      readFileSync(join(sandbox.home, "config.yaml"), "utf8"),
      "# my settings\nlimits:\n  maxTurns: 9 # enough\nplugins:\n  - alisio-plugin-weather\n"
    )

    const result = await sandbox.run(["run", "-m", "openai/test-model", "weather?"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "Lisbon is sunny.\n")
    assertOneRuntime(server, result.stderr, plugin)
    assert.include(offeredTools(chats(server)[0]!), weatherTool)

    const listed = await sandbox.run(["plugins", "list", "--json"])
    const document = JSON.parse(listed.stdout) as {
      plugins: ReadonlyArray<{
        id: string
        source: string
        from: string
        loaded: boolean
        tools: ReadonlyArray<string>
      }>
    }
    const weather = document.plugins.find((report) => report.id === "weather")!
    assert.deepStrictEqual(
      [weather.source, weather.from, weather.loaded, weather.tools],
      ["external", "config alisio-plugin-weather", true, [weatherTool]]
    )

    // The folder it was installed from names it for `plugins remove` (PRV-3) too.
    const removed = await sandbox.run(["plugins", "remove", plugin])
    assert.strictEqual(removed.code, 0, removed.stderr)
    assert.include(removed.stdout, "Removed alisio-plugin-weather from")
    assert.strictEqual(
      readFileSync(join(sandbox.home, "config.yaml"), "utf8"),
      "# my settings\nlimits:\n  maxTurns: 9 # enough\n"
    )
    assert.isFalse(existsSync(join(sandbox.home, "plugins", "node_modules", "alisio-plugin-weather")))
  })

  it("PL-1 --plugin <path> loads a plugin package for one run", async () => {
    const { sandbox, server } = await setup({ replies: forecastRun })
    const plugin = writePluginPackage(sandbox.home, "../weather-src", {
      name: "alisio-plugin-weather",
      source: weatherPluginSource
    })
    const result = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "weather?"])
    assert.strictEqual(result.code, 0, result.stderr)
    assertOneRuntime(server, result.stderr, plugin)
  })

  it("EV-6 a decision a plugin reports is a run event, stored unless decisions.telemetry is false", async () => {
    const decide = `p_${createHash("sha256").update("decider").digest("hex").slice(0, 10)}_decide`
    const { sandbox } = await setup({
      replyFor: (request) =>
        (request.body.messages ?? []).at(-1)?.role === "tool"
          ? { kind: "text", text: "decided" }
          : { kind: "tool", id: "call_1", name: decide, args: {} }
    })
    const plugin = writePluginPackage(sandbox.home, "../decider-src", {
      name: "alisio-plugin-decider",
      source: deciderPlugin
    })
    const runAndStore = async () => {
      const run = await sandbox.run(["run", "--json", "--plugin", plugin, "-m", "openai/test-model", "decide"])
      assert.strictEqual(run.code, 0, run.stderr)
      const sessionId = (JSON.parse(run.stdout.split("\n")[0]!) as { sessionId: string }).sessionId
      const stored = await sandbox.run(["sessions", "events", sessionId, "--json"])
      return { streamed: run.stdout, stored: stored.stdout }
    }

    const kept = await runAndStore()
    assert.include(eventTypes(kept.streamed), "decision_completed")
    assert.include(eventTypes(kept.stored), "decision_completed")
    assert.notInclude(kept.stored, "secret", "the state given to the decision provider is not stored")

    writeFileSync(join(sandbox.home, "config.yaml"), "decisions:\n  telemetry: false\n")
    const unstored = await runAndStore()
    assert.include(eventTypes(unstored.streamed), "decision_completed", "observers still see it")
    assert.notInclude(eventTypes(unstored.stored), "decision_completed")
    assert.include(eventTypes(unstored.stored), "tool_call_completed")
  })

  it("PL-6 a plugin that throws at import is one line on stderr; the run goes on", async () => {
    const { sandbox } = await setup({ replies: [{ kind: "text", text: "fine" }] })
    const plugin = writePluginPackage(sandbox.home, "../broken", {
      name: "broken",
      source: 'throw new Error("broken at import")\n'
    })
    const result = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "fine\n")
    const lines = result.stderr.split("\n").filter((line) => line.includes("broken at import"))
    assert.deepStrictEqual(lines, [
      `alisio: warning: plugin ${plugin}: could not be imported from ${join(plugin, "index.js")}: broken at import`
    ])
  })

  it("PL-6 a plugin whose import never settles is one line on stderr after the setup's 10 s; the run ends and the process exits", async () => {
    const { sandbox } = await setup({ replies: [{ kind: "text", text: "fine" }] })
    const plugin = writePluginPackage(sandbox.home, "../stuck", {
      name: "stuck",
      source: "await new Promise(() => {})\nexport default {}\n"
    })
    // Before, nothing ran: the import held the run for ever (and, on Node 20, the process).
    const result = await sandbox.run(["run", "--plugin", plugin, "-m", "openai/test-model", "hi"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "fine\n")
    const lines = result.stderr.split("\n").filter((line) => line.includes("never settles"))
    assert.deepStrictEqual(lines, [
      `alisio: warning: plugin ${plugin}: could not be imported from ${join(plugin, "index.js")}: its import did not finish within 10000 ms (a top-level await that never settles?)`
    ])
  }, 60_000)

  it("PL-3 an untrusted project's plugin is not imported; --trust-project loads it; --read-only loads no external one", async () => {
    const { sandbox } = await setup({ replies: [1, 2, 3].map(() => ({ kind: "text", text: "ok" }) as const) })
    const marker = join(sandbox.home, "..", "project-plugin-imported")
    writePluginPackage(join(sandbox.workspace, ".alisio", "plugins"), "local", {
      name: "local-plugin",
      source: markerPlugin(marker, "local")
    })
    const untrusted = await sandbox.run(["run", "-m", "openai/test-model", "hi"])
    assert.strictEqual(untrusted.code, 0, untrusted.stderr)
    assert.include(untrusted.stderr, "not loaded: a project plugin is loaded only with --trust-project")
    assert.isFalse(existsSync(marker))

    const readOnly = await sandbox.run(["run", "--read-only", "--trust-project", "-m", "openai/test-model", "hi"])
    assert.strictEqual(readOnly.code, 0, readOnly.stderr)
    assert.isFalse(existsSync(marker))

    const trusted = await sandbox.run(["run", "--trust-project", "-m", "openai/test-model", "hi"])
    assert.strictEqual(trusted.code, 0, trusted.stderr)
    assert.isTrue(existsSync(marker))
  })

  it("EX-3 `plugins list` names the winning start-up screen of a plugin writing escape sequences", async () => {
    const { sandbox } = await setup({ replies: [] })
    const plugin = writePluginPackage(sandbox.home, "../painter", {
      name: "painter",
      source: `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
export default definePlugin({
  id: "painter",
  version: "1.0.0",
  setup: Effect.flatMap(PluginApi, (api) =>
    api.extensions.provide("startup-screen", { render: () => Effect.succeed(["\\u001b[2J\\u001b]0;owned\\u0007boo"]) }, { priority: 9 })
  )
})
`
    })
    const listed = await sandbox.run(["plugins", "list", "--plugin", plugin])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.include(listed.stdout, "painter 1.0.0  (external, --plugin")
    assert.include(listed.stdout, "mascot: default, startup-screen: plugin painter")
    assert.notInclude(listed.stdout, "\u001b")
  })

  it("PL-6 `plugins list` shows a plugin whose setup failed, with why, and exits 1 as `mcp list` does", async () => {
    const { sandbox } = await setup({ replies: [] })
    const plugin = writePluginPackage(sandbox.home, "../broken", {
      name: "broken",
      source: `import { definePlugin } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
export default definePlugin({ id: "broken", version: "1.0.0", setup: Effect.die(new Error("no config for broken")) })
`
    })
    const listed = await sandbox.run(["plugins", "list", "--plugin", plugin])
    assert.strictEqual(listed.code, 1, listed.stderr)
    assert.include(listed.stdout, "broken 1.0.0  (external, --plugin")
    assert.match(listed.stdout, /^broken 1\.0\.0 .* failed$/m)
    assert.include(listed.stdout, "no config for broken")
    const json = await sandbox.run(["plugins", "list", "--json", "--plugin", plugin])
    assert.strictEqual(json.code, 1, json.stderr)
    assert.isFalse(
      (JSON.parse(json.stdout) as { plugins: ReadonlyArray<{ id: string; loaded: boolean }> }).plugins.find(
        (report) => report.id === "broken"
      )!.loaded
    )
  })

  it("PL-5 the memory plugin round-trips through two `alisio run` processes", async () => {
    const { sandbox, server } = await setup({
      replyFor: (request, index) => {
        if (index === 0)
          return {
            kind: "tool",
            id: "call_save",
            name: "memory_save",
            args: { title: "Deploys", content: "We deploy with blue-green on Fridays." }
          }
        if (index === 2) return { kind: "tool", id: "call_search", name: "memory_search", args: { query: "deploy" } }
        return { kind: "text", text: toolResults(request).at(-1) ?? "?" }
      }
    })
    const first = await sandbox.run(["run", "-m", "openai/test-model", "remember how we deploy"])
    assert.strictEqual(first.code, 0, first.stderr)
    assert.match(first.stdout, /^Saved memory #1 \(project\)\./)
    const second = await sandbox.run(["run", "-m", "openai/test-model", "how do we deploy?"])
    assert.strictEqual(second.code, 0, second.stderr)
    const requests = chats(server)
    // The search marks the words it matched: "We [deploy] with…".
    const found = toolResults(requests[3]!).join("\n")
    assert.include(found, "#1 Deploys")
    assert.include(found.replace(/\[(deploy)\]/gi, "$1"), "We deploy with blue-green on Fridays.")
    // Another session: the second run did not resume the first.
    assert.notInclude(JSON.stringify(requests[2]!.body.messages), "remember how we deploy")
    // The memory plugin's context names it in the second run's system prompt.
    assert.include(systemOf(requests[2]!), "Context from the plugin memory:")
  })

  it("CFG-1 a bad memory setting names its file, key path and what was expected; an unknown key is a warning", async () => {
    const { sandbox } = await setup({ replies: [{ kind: "text", text: "ok" }] })
    const globalFile = join(sandbox.home, "config.yaml")
    mkdirSync(sandbox.home, { recursive: true })
    const projectFile = join(sandbox.workspace, ".alisio", "config.yaml")
    mkdirSync(join(sandbox.workspace, ".alisio"), { recursive: true })
    writeFileSync(
      globalFile,
      "builtinPlugins:\n  memory:\n    injectBudgetTokens: 10\n    bogus: 1\n    maxContentChar: 500\n"
    )
    writeFileSync(projectFile, "builtinPlugins:\n  memory:\n    injectBudgetTokens: -5\n")
    const bad = await sandbox.run(["plugins", "list", "--trust-project"])
    assert.include(
      bad.stdout,
      `setup failed: ${projectFile}: builtinPlugins.memory.injectBudgetTokens: expected a whole number from 0 to 100000, got -5;`
    )

    writeFileSync(projectFile, "builtinPlugins:\n  memory:\n    maxContentChars: 500\n")
    const run = await sandbox.run(["run", "--trust-project", "-m", "openai/test-model", "hi"])
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stderr, `${globalFile}: unknown key builtinPlugins.memory.bogus is ignored\n`)
    assert.include(
      run.stderr,
      `${globalFile}: unknown key builtinPlugins.memory.maxContentChar is ignored (did you mean maxContentChars?)`
    )
  })

  it("PL-2 --disable-plugin turns a builtin plugin off; --read-only keeps it", async () => {
    const { sandbox, server } = await setup({ replies: [1, 2].map(() => ({ kind: "text", text: "ok" }) as const) })
    const off = await sandbox.run(["run", "--disable-plugin", "memory", "-m", "openai/test-model", "hi"])
    assert.strictEqual(off.code, 0, off.stderr)
    const readOnly = await sandbox.run(["run", "--read-only", "-m", "openai/test-model", "hi"])
    assert.strictEqual(readOnly.code, 0, readOnly.stderr)
    const [first, second] = chats(server)
    assert.notInclude(offeredTools(first!), "memory_search")
    assert.include(offeredTools(second!), "memory_search")
  })
})
