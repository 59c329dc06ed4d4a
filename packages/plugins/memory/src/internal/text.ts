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

// Words that match nearly every memory: they cost time (BM25 over most rows) and rank nothing.
const STOP_WORDS = new Set(
  (
    "a an and any are as at be but by can could did do does for from has have how i if in into is it its me my no not of on or " +
    "our please should so than that the their them then there these they this to us was we were what when where which who why " +
    "will with would you your"
  ).split(" ")
)

/**
 * The words of a user's query, as FTS5 sees words (letters, marks, digits, `_`), at most 16;
 * common English words are left out unless nothing else remains.
 */
export const queryTerms = (query: string): ReadonlyArray<string> => {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{M}\p{N}_]+/gu) ?? [])]
  const meaningful = words.filter((word) => !STOP_WORDS.has(word))
  return (meaningful.length > 0 ? meaningful : words).slice(0, MAX_TERMS)
}

/**
 * An FTS5 query that can never be a syntax error: every term is a quoted string (the terms hold no
 * quotes), joined by `AND` for `all` or `OR` for `any`. `undefined` when the text holds no word.
 */
export const ftsQuery = (query: string, match: "all" | "any"): string | undefined => {
  const terms = queryTerms(query)
  if (terms.length === 0) return undefined
  return terms.map((term) => `"${term}"`).join(match === "all" ? " AND " : " OR ")
}

const SNIPPET_WORDS = 14

/** A crude stem, for marking words in snippets only: "migrations" marks "migration", "tests" marks "testing". */
const stemOf = (term: string): string => term.slice(0, Math.max(3, term.length - 3))

/**
 * About 14 words of `content` around the first word matching a term, matches `[marked]`, `…` where
 * cut. Built here rather than by FTS5's `snippet()`, which would run the full-text query again
 * for every hit shown.
 */
export const snippetOf = (content: string, terms: ReadonlyArray<string>): string => {
  const words = content.split(/\s+/).filter((word) => word !== "")
  const stems = terms.map(stemOf)
  const matches = (word: string) => {
    const bare = word.toLowerCase().replace(/^[^\p{L}\p{N}_]+|[^\p{L}\p{N}_]+$/gu, "")
    return bare !== "" && stems.some((stem) => bare.startsWith(stem) || (bare.length >= 3 && stem.startsWith(bare)))
  }
  const first = words.findIndex(matches)
  const start = first <= 3 ? 0 : first - 3
  const end = Math.min(words.length, start + SNIPPET_WORDS)
  const shown = words.slice(start, end).map((word) => (matches(word) ? `[${word}]` : word))
  return `${start > 0 ? "… " : ""}${shown.join(" ")}${end < words.length ? " …" : ""}`
}
