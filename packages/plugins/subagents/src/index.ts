// The subagents plugin (CH-4): agent definitions, the task tools, their limits, git worktrees for
// writing subagents and the agent tree, written against the plugin API only.
import { definePlugin, PluginApi, type PluginDefinition } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import { formatDiagnostic } from "./AgentDefinition.js"
import { agentsCommand } from "./AgentsCommand.js"
import { readConfig } from "./SubagentsConfig.js"
import { makeTasks, type TasksOptions } from "./Tasks.js"
import { taskTools } from "./TaskTools.js"

export type { AgentDefinition, AgentDiagnostic } from "./AgentDefinition.js"
export { parseAgentFile } from "./AgentDefinition.js"
export { discoverAgents } from "./AgentDiscovery.js"

/** The plugin; `homeDir` replaces the home folder `~/.claude/agents/` is read from (tests). */
export const makeSubagentsPlugin = (options: TasksOptions = {}): PluginDefinition =>
  definePlugin({
    id: "subagents",
    version: "0.1.0",
    description: "Delegates to defined agents (Claude Code's files too), in parallel, in git worktrees.",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      const config = yield* readConfig(api.id, api.config)
      const tasks = yield* makeTasks(api, config, options)
      for (const tool of taskTools(tasks)) yield* api.tools.register(tool)
      yield* api.commands.register(agentsCommand(tasks, api))

      // Each problem of an agent file is told once per process.
      const told = new Set<string>()
      yield* api.context.provide((input) =>
        Effect.gen(function* () {
          const found = yield* tasks.discover(input.cwd)
          for (const diagnostic of found.diagnostics) {
            const line = formatDiagnostic(diagnostic)
            if (told.has(line)) continue
            told.add(line)
            yield* api.ui.notify(`agent file: ${line}`, {
              level: diagnostic.severity === "error" ? "error" : "warning"
            })
          }
          return [
            "Subagents you can delegate to with the task tool (subagent_type: description):",
            ...found.agents.map((agent) => `- ${agent.name}: ${agent.description.split("\n")[0]}`)
          ].join("\n")
        })
      )
    })
  })

export const subagentsPlugin = makeSubagentsPlugin()

export default subagentsPlugin
