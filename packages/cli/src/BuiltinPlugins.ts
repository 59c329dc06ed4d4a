// The builtin plugins (PL-1, PL-2, PKG-2): the runtime knows none of them; the CLI passes this list
// in. Adding a builtin plugin is one entry here. Each loads only when a command starts the plugin
// host, so `--version` and `--help` never import them.
import type { BuiltinPlugin } from "@alisio/runtime/PluginHost"

export const builtinPlugins: ReadonlyArray<BuiltinPlugin> = [
  { id: "memory", load: () => import("@alisio/plugin-memory").then((module) => module.default) },
  { id: "subagents", load: () => import("@alisio/plugin-subagents").then((module) => module.default) }
]
