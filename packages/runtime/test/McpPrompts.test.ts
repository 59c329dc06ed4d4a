// MCP prompts in the command catalog (MCP-1, CMD-1): the fixture server's prompt as
// `/mcp__<server>__<prompt>`, its place in the precedence, and what running it gives.
import * as path from "node:path"
import { CommandError, parseSlashCommand } from "@alisio/domain/Command"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as CommandCatalog from "@alisio/runtime/CommandCatalog"
import { McpServers, promptCommands } from "@alisio/runtime/McpServers"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import * as SystemContext from "@alisio/runtime/SystemContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { mcpWorld, stdioFixture } from "./helpers/mcp.js"
import { tempDir } from "./helpers/tempDir.js"

/** A plugin whose command takes the name of the server `Other`'s prompt. */
const shadowing = definePlugin({
  id: "shadow",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* api.commands.register({
      name: "mcp__other__greet",
      description: "the plugin's greeting",
      execute: () => Effect.succeed("plugin greet")
    })
  })
})

describe("MCP prompts in the command catalog", () => {
  it.scopedLive(
    "MCP-1 CMD-1 prompts are /mcp__<server>__<prompt> (lower case): plugin > mcp > template, the shadowed listed; running one gives its text as the prompt; /tools starts the servers",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        const template = path.join(folders.config, "prompts", "mcp__fixture__greet.md")
        write(template, "A template of the same name")
        const { context } = yield* mcpWorld({ fixture: stdioFixture(), Other: stdioFixture() })
        const layer = CommandCatalog.layer().pipe(
          Layer.provideMerge(SystemContext.layer(contextOptions(folders))),
          Layer.provideMerge(PluginHost.layer({ plugins: [shadowing] })),
          Layer.provideMerge(PluginUi.layerMemory),
          Layer.provideMerge(Layer.succeedContext(context))
        )
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog.CommandCatalog
          const mcp = yield* McpServers
          const contribution = yield* Scope.make()
          yield* catalog.contribute(promptCommands(mcp)).pipe(Scope.extend(contribution))

          const entries = (name: string) =>
            Effect.map(catalog.list(), (listings) =>
              listings.filter((l) => l.name === name).map((l) => [l.source, l.from, l.shadowedBy?.source])
            )
          // Nothing started yet: a listing starts no server, and knows none of their prompts.
          assert.deepStrictEqual(yield* entries("mcp__fixture__greet"), [["template", template, undefined]])
          assert.strictEqual((yield* mcp.status).filter((s) => s.status === "not_started").length, 2)

          // /tools starts the servers as a run would, to list their tools.
          const tools = yield* catalog.execute("tools", "")
          assert.strictEqual(tools._tag, "Text")
          assert.match(tools._tag === "Text" ? tools.text : "", /^ {2}mcp__fixture__echo\s+read\s+MCP server fixture$/m)
          assert.strictEqual((yield* mcp.status).filter((s) => s.status === "connected").length, 2)

          assert.deepStrictEqual(yield* entries("mcp__fixture__greet"), [
            ["mcp", "MCP server fixture", undefined],
            ["template", template, "mcp"]
          ])
          assert.deepStrictEqual(yield* entries("mcp__other__greet"), [
            ["plugin", "plugin shadow", undefined],
            ["mcp", "MCP server Other", "plugin"]
          ])
          const listing = yield* catalog.resolve("mcp__fixture__greet", "api")
          assert.strictEqual(listing.execution, "prompt")
          assert.strictEqual(listing.description, "Greets someone")
          assert.strictEqual(listing.argumentHint, "<name> [mood]")

          // Typed as a user types it: the words fill the arguments in order, the last the rest.
          const typed = Option.getOrThrow(parseSlashCommand("/mcp__fixture__greet Ada very cheerful"))
          assert.deepStrictEqual(yield* catalog.execute(typed.name, typed.args, { surface: "api" }), {
            _tag: "Prompt",
            prompt: "Say hello to Ada, very cheerful."
          })
          assert.deepStrictEqual(yield* catalog.execute("mcp__other__greet", "Ada"), {
            _tag: "Text",
            text: "plugin greet"
          })
          const missing = yield* Effect.flip(catalog.execute("mcp__fixture__greet", ""))
          assert.isTrue(Schema.is(CommandError)(missing))
          assert.strictEqual(missing.reason, "usage")
          assert.strictEqual(missing.message, "/mcp__fixture__greet needs name: give it after the command.")

          // The contribution ends with its scope: the template has its name back.
          yield* Scope.close(contribution, Exit.void)
          assert.deepStrictEqual(yield* entries("mcp__fixture__greet"), [["template", template, undefined]])
        }).pipe(Effect.provide(layer))
      })
  )
})
