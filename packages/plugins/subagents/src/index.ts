// The subagents plugin (CH-4): agent definitions, the task tools, their limits, git worktrees for
// writing subagents and the agent tree, written against the plugin API only. What every run needs
// is here: the tools as the model sees them, `/agents` as the catalog lists it, and the agents in
// the system context; the tasks themselves (`Delegation.ts`) are imported on first use (issue 17).
import * as os from "node:os"
import { deferredTools, onFirstUse } from "@alisio/domain/OnFirstUse"
import { definePlugin, PluginApi, type PluginDefinition } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import { makeDiscovery } from "./AgentDiscovery.js"
import { agentListing } from "./AgentListing.js"
import { readSettings } from "./internal/settings.js"
import { agentsCommandSpec, taskToolSpecs } from "./TaskToolSpecs.js"

export type { AgentDefinition, AgentDiagnostic } from "./AgentDefinition.js"
export { discoverAgents } from "./AgentDiscovery.js"

export interface TasksOptions {
  /** Replaces the home folder `~/.claude/agents/` is read from (tests). */
  readonly homeDir?: string | undefined
}

/** The plugin; `homeDir` replaces the home folder `~/.claude/agents/` is read from (tests). */
export const makeSubagentsPlugin = (options: TasksOptions = {}): PluginDefinition =>
  definePlugin({
    id: "subagents",
    version: "0.1.0",
    description: "Delegates to defined agents (Claude Code's files too), in parallel, in git worktrees.",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      const config = yield* readSettings(api.id, api.config)
      const discover = makeDiscovery({
        trustProject: api.trustProject,
        configHome: api.paths.configHome,
        homeDir: options.homeDir ?? os.homedir(),
        pluginRoots: Effect.map(api.plugins, (plugins) =>
          plugins.flatMap((plugin) => (plugin.root === undefined ? [] : [plugin.root]))
        )
      })
      const delegation = yield* onFirstUse(
        Effect.flatMap(
          Effect.promise(() => import("./Delegation.js")),
          (module) => module.makeDelegation(api, config, discover, { tools: taskToolSpecs, command: agentsCommandSpec })
        ),
        yield* Effect.scope
      )
      for (const tool of deferredTools(Object.values(taskToolSpecs), delegation)) yield* api.tools.register(tool)
      yield* api.commands.register({
        ...agentsCommandSpec,
        execute: (args, context) => Effect.flatMap(delegation, (parts) => parts.command.execute(args, context))
      })

      // Each problem of an agent file is told once per process.
      const told = new Set<string>()
      yield* api.context.provide((input) =>
        Effect.gen(function* () {
          const found = yield* discover(input.cwd)
          if (found.diagnostics.length > 0) {
            const { formatDiagnostic } = yield* Effect.promise(() => import("./AgentDefinition.js"))
            for (const diagnostic of found.diagnostics) {
              const line = formatDiagnostic(diagnostic)
              if (told.has(line)) continue
              told.add(line)
              yield* api.ui.notify(`agent file: ${line}`, {
                level: diagnostic.severity === "error" ? "error" : "warning"
              })
            }
          }
          return agentListing(found.agents)
        })
      )
    })
  })

export const subagentsPlugin = makeSubagentsPlugin()

export default subagentsPlugin
