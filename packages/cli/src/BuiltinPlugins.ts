// The builtin plugins (PL-1, PL-2, PKG-2): the runtime knows none of them; the CLI passes this list
// in. Adding a builtin plugin is one entry here. Their entry modules are small (what a plugin does
// is imported on its first use) and come with the plugin host's code: a module of its own, imported
// at every start, cost the module loader more than their code (issue 17). `--version` and `--help`
// never import them.
import memoryPlugin from "@alisio/plugin-memory"
import subagentsPlugin from "@alisio/plugin-subagents"
import type { BuiltinPlugin } from "@alisio/runtime/PluginHost"

export const builtinPlugins: ReadonlyArray<BuiltinPlugin> = [
  { id: "memory", load: () => memoryPlugin },
  { id: "subagents", load: () => subagentsPlugin }
]
