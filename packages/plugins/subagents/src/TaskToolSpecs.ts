// What the model is told of the task tools: names, descriptions and the JSON Schemas of their
// arguments, as constants, so that a run offers them without importing the tasks' code or deriving
// a JSON Schema (issue 17). `TaskTools.ts` decodes the arguments with the Schemas these are derived
// from (a test keeps the two equal) and is given these rather than importing them: the bundle then
// keeps them in the plugin's entry chunk instead of a chunk of their own loaded at every start.
import type { ToolSpec } from "@alisio/domain/Tool"

const taskId = { type: "string", description: "The id the task call returned." }
const int = { Int: { type: "integer", description: "an integer", title: "int" } }

const task: ToolSpec = {
  name: "task",
  description: [
    "Delegates a task to a subagent: an agent with its own instructions, tools and context, which works on its own and returns one report.",
    "Use it for work that would flood this conversation (searching a large codebase, reading many files, long command output), for independent parts of a job, and for a second, unbiased look.",
    "Agents: general (all of your tools), explore (fast read-only codebase search), plan (read-only, returns an ordered plan), and those listed in your instructions.",
    "Several task calls in one response run in parallel. The subagent does not see this conversation: put everything it needs in prompt.",
    "Its report comes back to you inside <subagent_result>; the person does not see it, so tell them what matters.",
    "With background: true it runs while you go on; its result arrives as a notice, or use task_wait / task_status."
  ].join(" "),
  parameters: {
    type: "object",
    required: ["description", "prompt", "subagent_type"],
    properties: {
      description: { type: "string", description: "A short (3-5 words) description of the task." },
      prompt: {
        type: "string",
        description:
          "The task for the subagent, complete: it does not see this conversation, so give it every fact, path and constraint it needs, and say what to report back."
      },
      subagent_type: {
        type: "string",
        description: "The agent to use: general, explore, plan, or another one listed in your instructions."
      },
      background: {
        type: "boolean",
        description:
          "Run it in the background and go on: the call returns its task id at once, and its result comes to you as a notice when it ends (or use task_wait)."
      }
    },
    additionalProperties: false
  }
}

const taskStatus: ToolSpec = {
  name: "task_status",
  description: "Tells where a background task stands, without waiting; gives its result when it has ended.",
  parameters: {
    type: "object",
    required: ["task_id"],
    properties: { task_id: taskId },
    additionalProperties: false
  }
}

const taskWait: ToolSpec = {
  name: "task_wait",
  description:
    "Waits for a background task to end and returns its result; with timeout_ms, gives up after that long and says where it stands (the task goes on).",
  parameters: {
    $defs: int,
    type: "object",
    required: ["task_id"],
    properties: {
      task_id: taskId,
      timeout_ms: {
        allOf: [
          {
            $ref: "#/$defs/Int",
            description: "a positive number",
            title: "positive",
            exclusiveMinimum: 0
          }
        ],
        description: "Give up waiting after this many milliseconds (the task goes on); wait until it ends when absent."
      }
    },
    additionalProperties: false
  }
}

/** The task tools by name, in the order they are registered. */
export const taskToolSpecs = { task, task_status: taskStatus, task_wait: taskWait } as const
export type TaskToolSpecs = typeof taskToolSpecs

/** `/agents`, as the command catalog lists it. */
export const agentsCommandSpec = {
  name: "agents",
  description: "Subagents of the session: list them; cancel, merge or discard one; show the agent definitions"
}
export type AgentsCommandSpec = typeof agentsCommandSpec
