// The agents as the system context lists them for the model. The host keeps at most 16 000
// characters of a plugin's context and cuts the rest, so the listing fits itself in less: each
// description is cut to a line, and past a budget the other agents are named without one. Every
// agent stays callable by name (the builtins, listed last, too); past some 700 names, the rest are counted.

/** What a listed agent shows: its name and the first line of its description. */
export interface ListedAgent {
  readonly name: string
  readonly description: string
}

const DESCRIPTION_CHARS = 200
const DESCRIBED_CHARS = 8_000
const NAMED_CHARS = 7_500

const firstLine = (text: string) => {
  const line = text.split("\n")[0]!.trim()
  return line.length > DESCRIPTION_CHARS ? `${line.slice(0, DESCRIPTION_CHARS - 1)}…` : line
}

export const agentListing = (agents: ReadonlyArray<ListedAgent>): string => {
  const lines = ["Subagents you can delegate to with the task tool (subagent_type: description):"]
  let used = 0
  let index = 0
  for (; index < agents.length; index++) {
    const agent = agents[index]!
    const line = `- ${agent.name}: ${firstLine(agent.description)}`
    if (used + line.length > DESCRIBED_CHARS) break
    lines.push(line)
    used += line.length + 1
  }
  if (index < agents.length) {
    const names: Array<string> = []
    let named = 0
    for (; index < agents.length && named + agents[index]!.name.length + 2 <= NAMED_CHARS; index++) {
      names.push(agents[index]!.name)
      named += agents[index]!.name.length + 2
    }
    const left = agents.length - index
    lines.push(
      `- also (no room for their descriptions; /agents defs shows them): ${names.join(", ")}` +
        (left > 0 ? `, and ${left} more` : "")
    )
  }
  return lines.join("\n")
}
