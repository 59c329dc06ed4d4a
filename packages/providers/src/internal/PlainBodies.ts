// Bodies read whole rather than streamed: the list of models, a completion from a server that
// ignored `stream: true`, and a web page where the API was expected.

import { isRecord } from "./Assembler.js"
import { baseUrlAdvice, plainText } from "./ErrorMapping.js"

/**
 * A non-streamed Chat `chat.completion` as the one chunk and `[DONE]` a stream would have carried,
 * so the same assembler reads it; `undefined` for any other payload.
 */
export const completionAsStream = (payload: unknown): string | undefined => {
  if (!isRecord(payload) || !Array.isArray(payload.choices)) return undefined
  const choice = payload.choices.find((c) => isRecord(c) && (c.index === undefined || c.index === 0))
  if (!isRecord(choice) || !isRecord(choice.message)) return undefined
  const { message } = choice
  // Streamed tool calls carry their position as `index`; whole ones have it implied.
  const calls = Array.isArray(message.tool_calls)
    ? message.tool_calls.map((call, index) => (isRecord(call) ? { index, ...call } : call))
    : undefined
  const chunk = {
    choices: [
      {
        index: 0,
        delta: calls === undefined ? message : { ...message, tool_calls: calls },
        finish_reason: choice.finish_reason ?? "stop"
      }
    ],
    ...(payload.usage === undefined ? {} : { usage: payload.usage })
  }
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`
}

/**
 * What a `/models` answer holds: the usable model ids; `wrong`, what it sent instead of a list, when
 * it is JSON of another shape; `undefined` when it is not JSON.
 */
export const modelIds = (
  text: string
): { readonly ids: ReadonlyArray<string> } | { readonly wrong: string } | undefined => {
  let page: unknown
  try {
    page = JSON.parse(text)
  } catch {
    return undefined
  }
  // Together AI answers with the bare array.
  if (Array.isArray(page)) return { ids: idsIn(page) }
  if (!isRecord(page)) return { wrong: describeJson(page) }
  if (!("data" in page)) return { wrong: "an object without `data`" }
  if (!Array.isArray(page.data)) return { wrong: `\`data\` as ${describeJson(page.data)}` }
  return { ids: idsIn(page.data) }
}

const idsIn = (data: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  data.flatMap((model) => (isRecord(model) && usableId(model.id) ? [model.id] : []))

/** A JSON value named by its kind, e.g. `an object`, `null`, `the text "ok"`. */
const describeJson = (value: unknown): string => {
  if (value === null) return "null"
  if (typeof value === "string") return `the text ${JSON.stringify(plainText(value).slice(0, 60))}`
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${String(value)}`
  return isRecord(value) ? "an object" : "a value of another kind"
}

/** The longest model id taken from a server; real ones are a few dozen characters. */
const MAX_ID = 256

/**
 * Whether a listed id can name a model: one line of printable text. An id with escape sequences or
 * line breaks would rewrite the terminal it is listed on, and cannot be typed after `-m` anyway.
 */
const usableId = (id: unknown): id is string =>
  typeof id === "string" && id !== "" && id.length <= MAX_ID && plainText(id) === id

/** What a web page answered instead of `expected` from the API: its title, and the likely remedy. */
export const webPageProblem = (html: string, baseURL: string, expected: string): string => {
  const title = plainText(/<title[^>]*>([^<]*)/i.exec(html)?.[1] ?? "").slice(0, 80)
  const page = title === undefined || title === "" ? "a web page" : `a web page ("${title}")`
  return `expected ${expected}, got ${page}: a sign-in page of a proxy, or no API at that address; ${baseUrlAdvice(baseURL)}.`
}
