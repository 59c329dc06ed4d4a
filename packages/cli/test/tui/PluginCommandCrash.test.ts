// A plugin command that throws, typed in the interactive UI: the crash is one line in the
// conversation, the command's error, not also a warning with the same text (CMD-1, PL-6).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as FakeProvider from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as CommandCatalogModule from "@alisio/runtime/CommandCatalog"
import { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import * as Interaction from "@alisio/runtime/Interaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as SessionStore from "@alisio/runtime/SessionStore"
import * as SystemContext from "@alisio/runtime/SystemContext"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Setup } from "../../src/App.js"
import { runCommand } from "../../src/tui/Commands.js"
import { PluginSink, pluginUiLayer } from "../../src/tui/Panels.js"
import { RunView } from "../../src/tui/RunView.js"
import { Screen } from "../../src/tui/Screen.js"
import { makeTheme } from "../../src/tui/Theme.js"
import { settle, VirtualTerminal } from "./VirtualTerminal.js"

const crashing = definePlugin({
  id: "cmds",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* api.commands.register({
      name: "boom",
      description: "Crashes",
      execute: () =>
        Effect.sync(() => {
          throw new Error("kaboom")
        })
    })
  })
})

describe("TUI plugin commands", () => {
  it("CMD-1 PL-6 a plugin command that throws shows its crash as one line in the conversation", async () => {
    const folder = mkdtempSync(join(tmpdir(), "alisio-tui-crash-"))
    const terminal = new VirtualTerminal(100, 30)
    const screen = new Screen(terminal, makeTheme({ color: false }))
    const sink = new PluginSink()
    sink.attach({ notice: (text, level) => screen.notice(text, level), panel: (panel) => screen.panels.set(panel) })
    const runtime = AgentRuntime.layer({
      tools: [],
      interaction: Interaction.layerHeadless({ approveAll: true })
    }).pipe(
      Layer.provideMerge(FakeProvider.layer([FakeProvider.answer("unused")])),
      Layer.provideMerge(SessionStore.layerMemory)
    )
    const layer = CommandCatalogModule.layer().pipe(
      Layer.provideMerge(SystemContext.layer({ cwd: folder, configHome: folder, home: folder, trustProject: false })),
      Layer.provideMerge(PluginHost.plugin(crashing, { external: true })),
      Layer.provideMerge(PluginHost.layer()),
      Layer.provideMerge(pluginUiLayer(sink)),
      Layer.provideMerge(runtime)
    )
    screen.tui.start()
    try {
      await Effect.runPromise(
        Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const store = yield* SessionStore.SessionStore
          yield* runCommand({
            name: "cmds:boom",
            args: "",
            catalog,
            store,
            screen,
            view: new RunView(screen, () => 0),
            state: { sessionId: undefined } as never,
            setup: { cwd: folder } as Setup,
            offer: () => undefined,
            send: () => undefined,
            resolveModel: Effect.die("no model in this test"),
            services: Context.empty() as never
          })
        }).pipe(Effect.provide(layer), Effect.scoped)
      )
      await settle()
      const lines = (await terminal.all()).map((line) => line.trimEnd())
      const told = lines.filter((line) => line.includes("kaboom"))
      assert.deepStrictEqual(told, ["The command cmds:boom failed: kaboom"], lines.join("\n"))
    } finally {
      screen.tui.stop()
      rmSync(folder, { recursive: true, force: true })
    }
  })
})
