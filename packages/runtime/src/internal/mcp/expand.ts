// `${VAR}` and `${VAR:-default}` in an MCP server's settings, as Claude Code expands them: in the
// command, args, env, cwd, url and headers. A variable that is unset (or empty) with no default
// stops the server from starting, with the names it missed.
import type { McpServer } from "../../ConfigSchema.js"

export type Environment = { readonly [name: string]: string | undefined }

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/** `text` with its references replaced; `missing` names the variables that had no value and no default. */
export const expandText = (
  text: string,
  env: Environment
): { readonly value: string; readonly missing: ReadonlyArray<string> } => {
  const missing: Array<string> = []
  const value = text.replace(reference, (whole, name: string, fallback: string | undefined) => {
    const found = env[name]
    if (found !== undefined && found !== "") return found
    if (fallback !== undefined) return fallback
    missing.push(name)
    return whole
  })
  return { value, missing }
}

/** How to reach a server, every reference expanded. */
export type Launch =
  | {
      readonly type: "stdio"
      readonly command: string
      readonly args: ReadonlyArray<string>
      readonly env: { readonly [name: string]: string }
      readonly cwd: string | undefined
    }
  | { readonly type: "http" | "sse"; readonly url: string; readonly headers: { readonly [name: string]: string } }

/** How to reach the server, or the one-line reason it cannot be (a variable without a value). */
export const expandServer = (
  server: McpServer,
  env: Environment
): { readonly _tag: "Right"; readonly launch: Launch } | { readonly _tag: "Left"; readonly message: string } => {
  const missing = new Set<string>()
  const text = (value: string) => {
    const expanded = expandText(value, env)
    for (const name of expanded.missing) missing.add(name)
    return expanded.value
  }
  const map = (values: { readonly [key: string]: string } | undefined) =>
    Object.fromEntries(Object.entries(values ?? {}).map(([key, value]) => [key, text(value)]))
  const launch: Launch =
    server.type === "stdio"
      ? {
          type: "stdio",
          command: text(server.command),
          args: (server.args ?? []).map(text),
          env: map(server.env),
          cwd: server.cwd === undefined ? undefined : text(server.cwd)
        }
      : { type: server.type, url: text(server.url), headers: map(server.headers) }
  if (missing.size > 0) {
    const names = [...missing].map((name) => `\${${name}}`)
    const one = names.length === 1
    return {
      _tag: "Left",
      message: `${names.join(", ")} ${one ? "is" : "are"} not set: set ${one ? "it" : "them"} in the environment, or give a default as \${NAME:-value}`
    }
  }
  return { _tag: "Right", launch }
}
