/** What a tool or server name may hold once it is Alisio's; other characters (MCP allows `.` and `/`) become `_`. */
export const safeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/** `mcp__<server>__<name>`: the name other agents give it too, so prompts and allow-lists carry over. */
export const mcpName = (server: string, name: string): string => `mcp__${safeName(server)}__${safeName(name)}`

/**
 * `/mcp__<server>__<prompt>` in the command catalog: lower case, as every command name is
 * (`commandNamePattern`), so a server or prompt named in capitals can still be typed.
 */
export const promptCommandName = (server: string, prompt: string): string => mcpName(server, prompt).toLowerCase()
