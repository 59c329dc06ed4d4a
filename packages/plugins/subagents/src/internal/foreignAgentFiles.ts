// The vocabulary of agent files written for Claude Code and opencode: their tool names and what
// they are in Alisio, the tools and keys that mean nothing here, and their `tools` list syntax.

/** Claude Code's tool names (and opencode's lower-case ones) → Alisio's. */
export const toolNames: Readonly<Record<string, string>> = {
  Read: "read",
  NotebookRead: "read",
  Write: "write",
  Edit: "edit",
  MultiEdit: "edit",
  NotebookEdit: "edit",
  Grep: "grep",
  Glob: "glob",
  LS: "ls",
  Bash: "bash",
  Task: "task",
  Agent: "task",
  AskUserQuestion: "ask_user_question",
  list: "ls",
  patch: "edit"
}

/** Claude Code and opencode tools Alisio has no equivalent of: left out with a warning. */
export const unmapped = new Set([
  "WebFetch",
  "WebSearch",
  "TodoWrite",
  "TodoRead",
  "Skill",
  "SlashCommand",
  "BashOutput",
  "KillShell",
  "KillBash",
  "ExitPlanMode",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  "webfetch",
  "websearch",
  "todowrite",
  "todoread"
])

/** Keys other tools define that Alisio reads no meaning from. */
export const foreignKeys: Readonly<Record<string, string>> = {
  skills: "skills are not supported",
  mcpServers: "per-agent MCP servers are not supported; the parent's MCP tools apply",
  hooks: "hooks are not supported",
  memory: "per-agent memory is not supported",
  effort: "a per-agent reasoning effort is not supported",
  initialPrompt: "only applies to a main agent",
  temperature: "sampling settings are not supported",
  top_p: "sampling settings are not supported",
  hidden: "every agent is listed"
}

/** Keys read without meaning: cosmetic. */
export const cosmeticKeys = new Set(["color"])

/** Claude Code's model aliases: they name Anthropic models, not one of this Alisio's providers. */
export const claudeAliases = new Set(["sonnet", "opus", "haiku", "opusplan", "default"])

/** Splits `Read, Bash(git diff:*), Task(a, b)` on the commas outside parentheses. */
export const splitTools = (text: string): Array<string> => {
  const items: Array<string> = []
  let depth = 0
  let current = ""
  for (const c of text) {
    if (c === "(") depth++
    else if (c === ")") depth = Math.max(0, depth - 1)
    if (c === "," && depth === 0) {
      items.push(current)
      current = ""
    } else current += c
  }
  items.push(current)
  return items.map((item) => item.trim()).filter((item) => item !== "")
}
