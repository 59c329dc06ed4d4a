// What a task's child session is asked to be: its system prompt, its tools and permissions, its
// limits and workspace, and how it shares the workspace with other writers.
import type { SpawnOptions } from "@alisio/domain/ChildSession"
import type { Permission } from "../AgentDefinition.js"
import type { SubagentsConfig } from "../SubagentsConfig.js"
import type { WorktreeRecord } from "../TaskRecords.js"
import type { LiveTask } from "../Tasks.js"

/** How a writing subagent shares the workspace. */
export type Mode = "shared" | "worktree" | "serial"

const policyOf = (permission: Permission | undefined) =>
  permission === undefined ? undefined : permission === "allow" ? "approve" : permission

/** The child's system prompt: the agent's own, then where and how it works. */
export const systemPrompt = (
  config: SubagentsConfig,
  task: LiveTask,
  cwd: string,
  tree: WorktreeRecord | undefined
) => {
  const { agent } = task
  const delegates = agent.delegates
  const mayDelegate = !agent.disallowedTools.includes("task") && (agent.tools === "*" || agent.tools.includes("task"))
  const others = task.discovered.agents.filter((a) => delegates === undefined || delegates.includes(a.name))
  return [
    agent.prompt,
    "",
    `You are the subagent "${task.record.label}" (task ${task.record.id}), working for another agent on one task. ` +
      "Nobody sees your intermediate steps and you cannot ask anyone anything: decide with what you have.",
    `The workspace is ${cwd}.`,
    ...(tree === undefined
      ? []
      : [
          `It is a git worktree of your own on the branch ${tree.branch}, started from commit ${tree.base.slice(0, 7)}; ` +
            "what you change stays on that branch until the person merges it."
        ]),
    ...(task.readOnly ? ["You are read-only: you cannot change files or run commands that could."] : []),
    "Your last message is your report: it is all the other agent gets back, so make it complete and concise.",
    ...(mayDelegate && task.record.depth < config.maxDepth && others.length > 0
      ? [
          "You may delegate parts of your task with the task tool to these agents (subagent_type):",
          ...others.map((a) => `- ${a.name}: ${a.description}`)
        ]
      : [])
  ].join("\n")
}

export const spawnOptions = (
  config: SubagentsConfig,
  task: LiveTask,
  cwd: string | undefined,
  tree: WorktreeRecord | undefined
): SpawnOptions => {
  const { agent } = task
  const write = policyOf(agent.permission.write)
  const external = policyOf(agent.permission.process)
  return {
    prompt: task.prompt,
    title: `${agent.name}: ${task.record.description}`,
    system: systemPrompt(config, task, cwd ?? task.cwd, tree),
    ...(agent.tools === "*" ? {} : { tools: agent.tools }),
    ...(agent.disallowedTools.length === 0 ? {} : { excludeTools: agent.disallowedTools }),
    ...(write === undefined && external === undefined
      ? {}
      : {
          approvals: { ...(write === undefined ? {} : { write }), ...(external === undefined ? {} : { external }) }
        }),
    ...(task.readOnly ? { readOnly: true } : {}),
    ...(agent.model === undefined ? {} : { model: agent.model }),
    limits: { maxTurns: Math.min(agent.maxTurns ?? config.maxTurns, config.maxTurns), timeoutMs: config.timeoutMs },
    ...(cwd === undefined ? {} : { cwd }),
    label: agent.name
  }
}

export const modeOf = (config: SubagentsConfig, task: LiveTask): Mode =>
  task.readOnly
    ? "shared"
    : task.agent.isolation === "worktree" || config.parallelWrites === "worktree"
      ? "worktree"
      : config.parallelWrites
