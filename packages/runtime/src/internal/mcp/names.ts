/** What a tool or server name may hold once it is Alisio's; other characters (MCP allows `.` and `/`) become `_`. */
export const safeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/** `mcp__<server>__<name>`: the name other agents give it too, so prompts and allow-lists carry over. */
export const mcpName = (server: string, name: string): string => `mcp__${safeName(server)}__${safeName(name)}`
