// The plugin's working parts, imported and made when a task tool or `/agents` is first used
// (issue 17): the tasks of this process (their queue, records writer and run observers), the
// tools' handlers and the command's.
import type { PluginCommand } from "@alisio/domain/Command"
import type { PluginApiService } from "@alisio/domain/Plugin"
import type { Tool } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Discovered } from "./AgentDiscovery.js"
import { agentsCommand } from "./AgentsCommand.js"
import type { SubagentsConfig } from "./SubagentsConfig.js"
import { makeTasks } from "./Tasks.js"
import type { AgentsCommandSpec, TaskToolSpecs } from "./TaskToolSpecs.js"
import { taskTools } from "./TaskTools.js"

export interface Delegation {
  /** The task tools by name. */
  readonly tools: ReadonlyMap<string, Tool>
  readonly command: PluginCommand
}

export const makeDelegation = (
  api: PluginApiService,
  config: SubagentsConfig,
  discover: (cwd: string) => Effect.Effect<Discovered>,
  specs: { readonly tools: TaskToolSpecs; readonly command: AgentsCommandSpec }
): Effect.Effect<Delegation, never, Scope.Scope> =>
  Effect.map(makeTasks(api, config, discover), (tasks) => ({
    tools: new Map(taskTools(tasks, specs.tools).map((tool) => [tool.name, tool])),
    command: agentsCommand(tasks, specs.command)
  }))
