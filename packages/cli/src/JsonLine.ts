// One line of JSON for stdout, which is often a terminal: JSON.stringify escapes only the C0
// controls, so DEL, the C1 controls (U+009B opens a sequence on some terminals) and the characters
// that reorder or break lines are written as escapes too. Parsed, the line is the same value.
const INVISIBLE = /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g

const asEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `value` as JSON on one line (no line end) in which every invisible character is an escape. */
export const jsonText = (value: unknown): string => JSON.stringify(value).replace(INVISIBLE, asEscape)

/** `value` as one line of JSON (with its line end) in which every invisible character is an escape. */
export const jsonLine = (value: unknown): string => `${jsonText(value)}\n`
