import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { Tools } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { echo, hostLayer, toolNames } from "./helpers/plugins.js"

const fixtures = fileURLToPath(new URL("./fixtures/plugins/", import.meta.url))
const fixture = (name: string) => path.join(fixtures, name)

/** What the fixture plugins record when they are imported (their side effect at import time). */
const imported = (): ReadonlyArray<string> =>
  (globalThis as { __alisioFixtureImports?: Array<string> }).__alisioFixtureImports ?? []

const resetImports = Effect.sync(() => {
  ;(globalThis as { __alisioFixtureImports?: Array<string> }).__alisioFixtureImports = []
})

interface Sandbox {
  readonly configHome: string
  readonly cwd: string
  /** Links a fixture plugin into `<configHome>/plugins/<name>` (or its node_modules). */
  readonly installGlobal: (fixtureName: string, as: string) => void
  /** Links a fixture plugin into the project's `.alisio/plugins/<name>`. */
  readonly installInProject: (fixtureName: string, as: string) => void
}

const sandbox: Effect.Effect<Sandbox, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "alisio-plugin-sources-"))),
  (root) => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
).pipe(
  Effect.map((root): Sandbox => {
    const configHome = path.join(root, "config")
    const cwd = path.join(root, "project")
    fs.mkdirSync(configHome, { recursive: true })
    fs.mkdirSync(cwd, { recursive: true })
    const link = (fixtureName: string, target: string) => {
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.symlinkSync(fixture(fixtureName), target)
    }
    return {
      configHome,
      cwd,
      installGlobal: (fixtureName, as) => link(fixtureName, path.join(configHome, "plugins", as)),
      installInProject: (fixtureName, as) => link(fixtureName, path.join(cwd, ".alisio", "plugins", as))
    }
  }),
  Effect.tap(() => resetImports)
)

const external = (box: Sandbox, options: Partial<PluginHost.SourcesInput> = {}): PluginHost.SourcesInput => ({
  configHome: box.configHome,
  cwd: box.cwd,
  trustProject: false,
  ...options
})

/** Loads a host with `options`, reads what it holds, and closes it. */
const loadHost = (options: PluginHost.Options) =>
  Effect.gen(function* () {
    const host = yield* PluginHost.PluginHost
    return {
      reports: yield* host.plugins,
      tools: yield* toolNames,
      entries: yield* Effect.flatMap(Tools, (tools) => tools.entries),
      commands: yield* host.commands.list,
      diagnostics: yield* host.diagnostics,
      winners: yield* host.extensions.winners,
      startup: yield* host.extensions.renderStartup({ columns: 60, rows: 12, color: false, unicode: true })
    }
  }).pipe(Effect.provide(hostLayer([], options)))

const summary = (reports: ReadonlyArray<PluginHost.PluginReport>) =>
  reports.map((report) => ({
    id: report.id,
    source: report.source,
    enabled: report.enabled,
    trusted: report.trusted,
    loaded: report.loaded
  }))

describe("PluginHost sources", () => {
  it.scoped(
    "PL-1 PL-3 --plugin (folder or file), the config list and the global folder; external names and effects",
    () =>
      Effect.gen(function* () {
        const box = yield* sandbox
        box.installGlobal("npm-good", "node_modules/alisio-plugin-counter")
        const loaded = yield* loadHost({
          external: external(box, {
            flags: [path.relative(box.cwd, fixture("folder-good"))],
            entries: [{ source: fixture("npm-good"), config: { unused: true } }]
          })
        })
        assert.deepStrictEqual(summary(loaded.reports), [
          { id: "greeter", source: "external", enabled: true, trusted: true, loaded: true },
          { id: "counter", source: "external", enabled: true, trusted: true, loaded: true }
        ])
        assert.strictEqual(loaded.reports[0]!.from, `--plugin ${path.relative(box.cwd, fixture("folder-good"))}`)
        assert.strictEqual(loaded.reports[1]!.from, `config ${fixture("npm-good")}`)
        const greet = loaded.entries.find((entry) => entry.tool.name.endsWith("_greet"))!
        assert.match(greet.tool.name, /^p_[0-9a-f]{10}_greet$/)
        assert.strictEqual(greet.tool.effect, "external")
        assert.deepStrictEqual(loaded.reports[0]!.commands, ["greeter:hello"])
        // The same package reached from the config list and the global folder loads once.
        assert.deepStrictEqual(imported(), ["greeter", "counter"])
        assert.deepStrictEqual(loaded.diagnostics, [])
      })
  )

  it.scoped(
    "PL-1 a package installed in the plugins folder and disabled in the configuration (enabled: false) does not load",
    () =>
      Effect.gen(function* () {
        const box = yield* sandbox
        box.installGlobal("npm-good", "node_modules/alisio-plugin-counter")
        const loaded = yield* loadHost({
          external: external(box, { entries: [{ source: "alisio-plugin-counter", enabled: false }] })
        })
        assert.deepStrictEqual(summary(loaded.reports), [
          { id: "alisio-plugin-counter", source: "external", enabled: false, trusted: true, loaded: false }
        ])
        assert.deepStrictEqual(loaded.tools, [])
      })
  )

  // Each import-proof uses a fixture no other test of this file imports: a module is imported once.
  it.scoped("PL-3 under --read-only external plugins are off and not even imported; builtin ones load", () =>
    Effect.gen(function* () {
      const box = yield* sandbox
      box.installGlobal("readonly-probe", "probe")
      const loaded = yield* loadHost({
        readOnly: true,
        plugins: [definePlugin({ id: "inside", version: "1.0.0", setup: Effect.void })],
        external: external(box, { flags: [fixture("readonly-probe")] })
      })
      assert.deepStrictEqual(summary(loaded.reports), [
        { id: "inside", source: "builtin", enabled: true, trusted: true, loaded: true },
        { id: fixture("readonly-probe"), source: "external", enabled: false, trusted: true, loaded: false }
      ])
      assert.deepStrictEqual(loaded.reports[1]!.diagnostics, ["external plugins are off under --read-only"])
      assert.deepStrictEqual(imported(), [])
    })
  )

  it.scoped("PL-1 PL-3 a project's plugins are not imported without --trust-project, and load with it", () =>
    Effect.gen(function* () {
      const box = yield* sandbox
      box.installInProject("project-plugin", "projector")
      const untrusted = yield* loadHost({ external: external(box) })
      assert.deepStrictEqual(summary(untrusted.reports), [
        {
          id: path.join(box.cwd, ".alisio", "plugins", "projector"),
          source: "external",
          enabled: false,
          trusted: false,
          loaded: false
        }
      ])
      assert.deepStrictEqual(
        untrusted.diagnostics.map((diagnostic) => diagnostic.message),
        ["not loaded: a project plugin is loaded only with --trust-project"]
      )
      assert.deepStrictEqual(imported(), [])

      const trusted = yield* loadHost({ external: external(box, { trustProject: true }) })
      assert.deepStrictEqual(summary(trusted.reports), [
        { id: "projector", source: "external", enabled: true, trusted: true, loaded: true }
      ])
      assert.deepStrictEqual(imported(), ["projector"])
    })
  )

  it.scoped("PL-6 a plugin throwing at import and one dying in setup are diagnostics; the others load", () =>
    Effect.gen(function* () {
      const box = yield* sandbox
      const loaded = yield* loadHost({
        external: external(box, {
          flags: [fixture("throws-at-import"), fixture("setup-dies"), fixture("bad-manifest"), fixture("folder-good")]
        })
      })
      assert.deepStrictEqual(
        loaded.diagnostics.map((diagnostic) => [diagnostic.stage, diagnostic.message]),
        [
          [
            "discover",
            `${path.join(fixture("bad-manifest"), "alisio-plugin.json")} asks for plugin API version 2; this Alisio offers version 1`
          ],
          [
            "import",
            `could not be imported from ${path.join(fixture("throws-at-import"), "index.js")}: this plugin is broken at import`
          ],
          ["setup", "setup crashed: setup exploded; everything it registered was removed"]
        ]
      )
      assert.deepStrictEqual(
        loaded.reports.map((report) => [report.id, report.loaded]),
        [
          [fixture("bad-manifest"), false],
          [fixture("throws-at-import"), false],
          ["kamikaze", false],
          ["greeter", true]
        ]
      )
      assert.deepStrictEqual(
        loaded.tools.map((name) => name.replace(/^p_[0-9a-f]{10}_/, "")),
        ["greet"]
      )
      assert.deepStrictEqual(
        loaded.commands.map((command) => command.name),
        ["greeter:hello"]
      )
    })
  )

  it.scoped(
    "PL-2 builtin plugins: configured under builtinPlugins.<id>, off by enabled: false or --disable-plugin",
    () =>
      Effect.gen(function* () {
        const configured: Array<unknown> = []
        const builtin = (id: string): PluginHost.BuiltinPlugin => ({
          id,
          load: () =>
            definePlugin({
              id,
              version: "1.0.0",
              setup: Effect.gen(function* () {
                const api = yield* PluginApi
                configured.push([id, api.builtin, api.config])
                yield* api.tools.register(echo(`${id}_tool`, "internal"))
              })
            })
        })
        const loaded = yield* loadHost({
          builtin: [builtin("alpha"), builtin("beta"), builtin("gamma")],
          builtinConfig: { alpha: { budget: 3 }, beta: { enabled: false } },
          disabled: ["gamma"],
          readOnly: true
        })
        assert.deepStrictEqual(summary(loaded.reports), [
          { id: "alpha", source: "builtin", enabled: true, trusted: true, loaded: true },
          { id: "beta", source: "builtin", enabled: false, trusted: true, loaded: false },
          { id: "gamma", source: "builtin", enabled: false, trusted: true, loaded: false }
        ])
        assert.deepStrictEqual(configured, [["alpha", true, { budget: 3 }]])
        assert.deepStrictEqual(
          loaded.entries.map((entry) => [entry.tool.name, entry.tool.effect]),
          [["alpha_tool", "internal"]]
        )
      })
  )

  it.scoped("CFG-1 a builtin plugin learns which configuration file set each of its keys (the stronger one wins)", () =>
    Effect.gen(function* () {
      const sources: Array<unknown> = []
      yield* loadHost({
        builtin: [
          {
            id: "alpha",
            load: () =>
              definePlugin({
                id: "alpha",
                version: "1.0.0",
                setup: Effect.map(PluginApi, (api) => {
                  const where = (path: ReadonlyArray<string>) => api.configSource?.(path)
                  sources.push(where(["budget"]), where(["nested", "depth"]), where(["only"]), where(["absent"]))
                })
              })
          }
        ],
        builtinConfig: { alpha: { budget: 3, nested: { depth: 2 }, only: true } },
        builtinConfigFiles: [
          { file: "/home/me/config.yaml", builtinPlugins: { alpha: { budget: 1, only: true } } },
          { file: "/work/.alisio/config.yaml", builtinPlugins: { alpha: { budget: 3, nested: { depth: 2 } } } }
        ]
      })
      assert.deepStrictEqual(sources, [
        "/work/.alisio/config.yaml",
        "/work/.alisio/config.yaml",
        "/home/me/config.yaml",
        undefined
      ])
    })
  )

  it.scoped("PL-1 the same id from two sources: the second is refused with a diagnostic", () =>
    Effect.gen(function* () {
      const box = yield* sandbox
      const loaded = yield* loadHost({
        plugins: [definePlugin({ id: "greeter", version: "0.0.1", setup: Effect.void })],
        external: external(box, { flags: [fixture("folder-good")] })
      })
      assert.deepStrictEqual(
        loaded.reports.map((report) => [report.id, report.source, report.loaded]),
        [
          ["greeter", "builtin", true],
          ["greeter", "external", false]
        ]
      )
      assert.deepStrictEqual(
        loaded.diagnostics.map((diagnostic) => diagnostic.message),
        [
          `is refused: a plugin with this id is already loaded (from builtin); this one is from --plugin ${fixture("folder-good")}`
        ]
      )
    })
  )

  it.scoped(
    "EX-3 a plugin writing escape sequences into the start-up screen is sanitized and named as the winner",
    () =>
      Effect.gen(function* () {
        const box = yield* sandbox
        const loaded = yield* loadHost({ external: external(box, { flags: [fixture("escapes")] }) })
        assert.deepStrictEqual(
          loaded.winners.map((winner) => [winner.point, winner.pluginId]),
          [
            ["mascot", undefined],
            ["startup-screen", "painter"]
          ]
        )
        const screen = loaded.startup
        assert.strictEqual(screen.screen, "painter")
        const text = screen.lines.join("\n")
        assert.include(text, "RED screen")
        assert.notInclude(text, "pwned")
        // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for what must not be there
        assert.notMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f]/)
      })
  )
})
