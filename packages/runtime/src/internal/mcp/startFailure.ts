// Why an MCP server did not start, as one bounded clause naming the remedy: a command that is
// not there, an HTTP status, a host that cannot be reached, a URL that is no MCP endpoint.
import type { Launch } from "./expand.js"

export const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null ? (error as { readonly code?: unknown }).code : undefined

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** A start that failed, said as a clause. */
export const startFailure = (error: unknown, launch: Launch): string => {
  const code = errorCode(error)
  if (launch.type === "stdio" && code === "ENOENT") {
    return `cannot run "${launch.command}": no such command (check its "command" and PATH)`
  }
  if (launch.type === "stdio" && code === "EACCES") return `cannot run "${launch.command}": permission denied`
  if (launch.type === "stdio") return messageOf(error)
  if (typeof code === "number" && code >= 400 && code < 600) {
    const hint = code === 401 || code === 403 ? " (check its headers: does it need a token?)" : ""
    return oneLine(`the server answered HTTP ${code}${hint}: ${messageOf(error)}`)
  }
  // The host only: a URL's path or query may hold a token.
  const host = URL.canParse(launch.url) ? new URL(launch.url).host : "its url"
  const cause = typeof error === "object" && error !== null ? (error as { readonly cause?: unknown }).cause : undefined
  const network = errorCode(cause) ?? (cause instanceof Error ? cause.message : undefined)
  if (typeof network === "string" && messageOf(error) === "fetch failed") {
    const why = network === "ECONNREFUSED" ? "connection refused" : network === "ENOTFOUND" ? "no such host" : network
    return `cannot reach ${host}: ${why} (is the server running, and its url right?)`
  }
  if (error instanceof SyntaxError || /Unexpected content type/.test(messageOf(error))) {
    return oneLine(
      `${host} did not answer as an MCP server (${messageOf(error)}): is its url the server's MCP endpoint?`
    )
  }
  return oneLine(messageOf(error))
}

/** A message on one line, bounded: a server's HTML error page is no diagnostic. */
const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= 300 ? line : `${line.slice(0, 300)}…`
}
