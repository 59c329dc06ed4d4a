// What reaches the memory file and the FTS index from user text.

export const REDACTED = "[private]"

/**
 * `<private>…</private>` spans (any case, across lines) become `[private]`; an opening tag that is
 * never closed hides everything after it, so a forgotten tag never leaks the rest.
 */
export const redactPrivate = (text: string): { readonly text: string; readonly redacted: boolean } => {
  const redacted = text.replace(/<private>[\s\S]*?(?:<\/private>|$)/gi, REDACTED)
  return { text: redacted, redacted: redacted !== text }
}

/** `text` cut to `max` characters (never inside a surrogate pair), and whether it was cut. */
export const cap = (text: string, max: number): { readonly text: string; readonly cut: boolean } => {
  if (text.length <= max) return { text, cut: false }
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max
  return { text: text.slice(0, end), cut: true }
}

const MAX_TERMS = 16

/** The words of a user's query, as FTS5 sees words: letters, digits and `_`. */
export const queryTerms = (query: string): ReadonlyArray<string> =>
  [...new Set((query.toLowerCase().match(/[\p{L}\p{M}\p{N}_]+/gu) ?? []).filter((term) => term.length > 0))].slice(
    0,
    MAX_TERMS
  )

/**
 * An FTS5 query that can never be a syntax error: every term is a quoted string (the terms hold no
 * quotes), joined by `AND` for `all` or `OR` for `any`. `undefined` when the text holds no word.
 */
export const ftsQuery = (query: string, match: "all" | "any"): string | undefined => {
  const terms = queryTerms(query)
  if (terms.length === 0) return undefined
  return terms.map((term) => `"${term}"`).join(match === "all" ? " AND " : " OR ")
}
