// The command catalog and the system context over the real runtime on the FakeProvider, with
// folders of a test's own for the config, the home and the workspace.

import * as fs from "node:fs"
import * as path from "node:path"
import type { Tool } from "@alisio/domain/Tool"
import type * as Fake from "@alisio/providers/FakeProvider"
import * as CommandCatalog from "@alisio/runtime/CommandCatalog"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import * as SystemContext from "@alisio/runtime/SystemContext"
import * as Layer from "effect/Layer"
import { runnerLayer } from "./harness.js"

/** Writes a file, making its folders. */
export const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** The folders of a test: `config` (`<config>`), `home` (`~`), `workspace`. */
export const foldersIn = (root: string) => {
  const folders = {
    config: path.join(root, "config"),
    home: path.join(root, "home"),
    workspace: path.join(root, "workspace")
  }
  for (const folder of Object.values(folders)) fs.mkdirSync(folder, { recursive: true })
  return folders
}

export const contextOptions = (
  folders: ReturnType<typeof foldersIn>,
  over: Partial<SystemContext.Options> = {}
): SystemContext.Options => ({
  cwd: folders.workspace,
  configHome: folders.config,
  home: folders.home,
  trustProject: false,
  ...over
})

/** The catalog over the system context, the plugin host and the runtime on the FakeProvider. */
export const catalogLayer = (options: {
  readonly context: SystemContext.Options
  readonly script?: Fake.Script | undefined
  readonly tools?: ReadonlyArray<Tool> | undefined
  readonly host?: PluginHost.Options | undefined
  readonly catalog?: CommandCatalog.Options | undefined
}) =>
  CommandCatalog.layer(options.catalog).pipe(
    Layer.provideMerge(SystemContext.layer(options.context)),
    Layer.provideMerge(PluginHost.layer(options.host)),
    Layer.provideMerge(PluginUi.layerMemory),
    Layer.provideMerge(runnerLayer({ script: options.script ?? [], tools: options.tools ?? [] }))
  )
