/** Parses `500ms`, `30s`, `2m`, `1h` or a plain number of milliseconds; `undefined` when it is none of these. */
export const parseDuration = (text: string): number | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text)
  if (match === null) return undefined
  const value = Number(match[1])
  const unit = (match[2] ?? "ms").toLowerCase()
  const ms = Math.round(value * (unit === "h" ? 3_600_000 : unit === "m" ? 60_000 : unit === "s" ? 1_000 : 1))
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined
}
