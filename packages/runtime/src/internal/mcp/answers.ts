// A server's answers as the SDK can take them. The SDK drops a response it finds malformed (a
// `result` that is null or no object, an error without a numeric code, a key too many) or that
// the transport could not read (a line past its 10 MB), and the request it answers then waits
// until its timeout: ten minutes of a run by default. Here such an answer becomes a JSON-RPC
// error for its request, which fails at once, saying why (MCP-1).
import type { JSONRPCMessage } from "./thirdParty.js"

/** Marks the errors made here, so a call says the server failed rather than refused. */
export const UNREADABLE = "alisio:unreadable-answer"

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is string | number =>
  typeof value === "string" || (typeof value === "number" && Number.isInteger(value))

const describeValue = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "a list" : typeof value

/** The error that stands for an answer the SDK could not take. */
export const unreadableAnswer = (id: string | number, why: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  error: { code: -32603, message: why, data: UNREADABLE }
})

/**
 * A message as the SDK takes it: a response reduced to its JSON-RPC keys, and a malformed one
 * turned into an error for its request. Requests and notifications pass as they are.
 */
export const normalizeMessage = (message: { readonly [key: string]: unknown }): JSONRPCMessage => {
  if ("method" in message || !isId(message.id)) return message as unknown as JSONRPCMessage
  const { error, id, result } = message
  if ("error" in message) {
    if (isObject(error) && Number.isInteger(error.code) && typeof error.message === "string") {
      return { jsonrpc: "2.0", id, error: error as { code: number; message: string } }
    }
    const text = isObject(error) && typeof error.message === "string" ? `: ${error.message.slice(0, 2_000)}` : ""
    return unreadableAnswer(id, `its error answer is not valid JSON-RPC (no numeric code and message)${text}`)
  }
  if (!("result" in message)) return unreadableAnswer(id, "its answer holds neither a result nor an error")
  if (!isObject(result)) {
    return unreadableAnswer(id, `its answer is not valid MCP: the result is ${describeValue(result)}, not an object`)
  }
  return keyCount(message) === 3 ? (message as unknown as JSONRPCMessage) : { jsonrpc: "2.0", id, result }
}

// Counted rather than listed: every response passes here, and `Object.keys` would be an array each.
const keyCount = (message: object): number => {
  let count = 0
  for (const _ in message) count++
  return count
}

// The top-level id of a line cut short: first (`{"jsonrpc":"2.0","id":3,"result":…`, as most
// servers write it) or last (`{"result":…,"jsonrpc":"2.0","id":3}`, as the TypeScript SDK does).
const leadingId = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"[^"\\]*")/
const trailingId = /"id"\s*:\s*(-?\d+|"[^"\\]*")\s*\}\s*$/
// Which of these keys comes first tells a response from a request of the server's.
const firstKey = /"(result|error|method)"\s*:/

/**
 * The error for the request a line too long to read answered, when its start and end tell which
 * request that is; undefined when they do not (or it is a request or notification of the server).
 */
export const oversizedAnswer = (head: string, tail: string, maxBytes: number): JSONRPCMessage | undefined => {
  if (firstKey.exec(head)?.[1] === "method") return undefined
  const found = leadingId.exec(head)?.[1] ?? trailingId.exec(tail)?.[1]
  if (found === undefined) return undefined
  const id: string | number = found.startsWith('"') ? found.slice(1, -1) : Number(found)
  const mb = Math.round(maxBytes / 1024 / 1024)
  return unreadableAnswer(id, `its answer is larger than ${mb} MB, the most Alisio reads of one message`)
}
