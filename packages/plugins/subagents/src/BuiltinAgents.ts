// The agents every workspace has, after the ones found in files (a file may replace one by name).
import type { AgentDefinition } from "./AgentDefinition.js"

const builtin = (agent: Omit<AgentDefinition, "source" | "disallowedTools" | "permission" | "background">) =>
  ({ disallowedTools: [], permission: {}, background: false, source: "builtin", ...agent }) satisfies AgentDefinition

const searchTools = ["read", "grep", "glob", "ls"]

export const builtinAgents: ReadonlyArray<AgentDefinition> = [
  builtin({
    name: "general",
    description:
      "General-purpose agent for multi-step tasks: researching a question across the code, making changes, running commands. Has all of your tools.",
    prompt: [
      "You are a general-purpose agent. Do the task you are given completely, with the tools you have.",
      "Search before you assume; read the code you change; check your work (run the tests or the command that proves it) before you answer.",
      "Answer with what you did and found: the files you changed, what you verified, and anything left undone and why."
    ].join("\n"),
    tools: "*",
    readOnly: false
  }),
  builtin({
    name: "explore",
    description:
      "Fast read-only codebase search: finds files, definitions and usages and explains how something works. Give it the question and how thorough to be.",
    prompt: [
      "You are a fast, read-only search agent. Find what the task asks for in the workspace with glob, grep, ls and read.",
      "Start broad (file names, then contents), narrow down, and read only what you need to be sure.",
      "Answer with the facts found, each with its file path (and line where it helps); say plainly what you could not find."
    ].join("\n"),
    tools: searchTools,
    readOnly: true
  }),
  builtin({
    name: "plan",
    description:
      "Read-only planner: studies the code and returns an ordered, step-by-step plan for a change, naming the files each step touches. It changes nothing.",
    prompt: [
      "You are a read-only planning agent. Study the code the task concerns with glob, grep, ls and read; change nothing.",
      "Answer with an ordered plan: numbered steps, each naming the files and functions it touches and how to check it,",
      "then the risks and open questions. Be concrete; no step should need guessing."
    ].join("\n"),
    tools: searchTools,
    readOnly: true
  })
]
