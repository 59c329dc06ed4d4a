// The plugin host as the CLI composes it: the builtin registry, the plugins the configuration and
// the flags name, and the folders of the Alisio homes.
import * as path from "node:path"
import * as Extensions from "@alisio/runtime/Extensions"
import type { AlisioPaths } from "@alisio/runtime/Paths"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import * as Layer from "effect/Layer"
import type { Setup } from "./App.js"
import { builtinPlugins } from "./BuiltinPlugins.js"
import { cacheHome } from "./CacheHome.js"
import type { RunFlags } from "./Flags.js"
import { version } from "./Version.js"

/** What the command line says about plugins. */
export interface PluginFlags {
  /** `--plugin <path|package>`: paths relative to the current directory. */
  readonly plugins: ReadonlyArray<string>
  /** `--disable-plugin <id>`. */
  readonly disabled: ReadonlyArray<string>
  readonly readOnly: boolean
  readonly trustProject: boolean
}

export const noPluginFlags: PluginFlags = { plugins: [], disabled: [], readOnly: false, trustProject: false }

/** A relative path on the command line is relative to where the command was typed, not to `--cwd`. */
const fromCommandLine = (spec: string): string => (spec.startsWith(".") ? path.resolve(spec) : spec)

export const pluginHomes = (paths: AlisioPaths): PluginHost.PluginHomes => ({
  state: paths.stateHome,
  config: paths.configHome,
  cache: cacheHome()
})

/** The options of the host for a command of the CLI. */
export const hostOptions = (setup: Setup, flags: PluginFlags): PluginHost.Options => ({
  builtin: builtinPlugins,
  builtinConfig: setup.config.builtinPlugins,
  builtinConfigFiles: setup.layers.flatMap((layer) =>
    (layer.kind === "global" || layer.kind === "project") && layer.detail !== undefined
      ? [{ file: layer.detail, builtinPlugins: layer.config.builtinPlugins }]
      : []
  ),
  external: {
    flags: flags.plugins.map(fromCommandLine),
    entries: setup.config.plugins,
    configHome: setup.paths.configHome,
    cwd: setup.cwd,
    trustProject: flags.trustProject
  },
  readOnly: flags.readOnly,
  disabled: flags.disabled,
  homes: pluginHomes(setup.paths),
  decisionTelemetry: setup.config.decisions?.telemetry
})

/**
 * The host with the extension registry and a UI port: `headless` prints diagnostics and
 * notifications on stderr; `quiet` keeps them for the command to show (`plugins list`).
 */
export const pluginHostLayer = (setup: Setup, flags: PluginFlags, ui: "headless" | "quiet") =>
  PluginHost.layer(hostOptions(setup, flags)).pipe(
    Layer.provideMerge(
      Layer.mergeAll(ui === "headless" ? PluginUi.layerHeadless : PluginUi.layerMemory, Extensions.layer({ version }))
    )
  )

/** The plugin flags of `alisio run`. */
export const pluginFlagsOf = (flags: RunFlags): PluginFlags => ({
  plugins: flags.plugin,
  disabled: flags.disablePlugin,
  readOnly: flags.readOnly,
  trustProject: flags.trustProject
})
