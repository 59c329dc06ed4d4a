// Durations as people write and read them. One formatter for every message that names a time:
// the runner's timeout sentences, the CLI's help, progress and summary.

const MINUTE = 60_000
const HOUR = 3_600_000

/**
 * A duration as people read it: `850ms`, `1.5s`, `42s`, `2m`, `1m30s`, `1h5m`. Under ten seconds
 * it keeps a tenth of a second; past an hour it drops the seconds. `parseDuration` reads it back.
 */
export const formatDuration = (ms: number): string => {
  const rounded = Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0
  if (rounded < 1_000) return `${rounded}ms`
  if (rounded < 9_950) return `${Math.round(rounded / 100) / 10}s`
  const seconds = Math.round(rounded / 1_000)
  if (seconds < 60) return `${seconds}s`
  if (seconds * 1_000 < HOUR) {
    const minutes = Math.floor((seconds * 1_000) / MINUTE)
    const rest = seconds % 60
    return rest === 0 ? `${minutes}m` : `${minutes}m${rest}s`
  }
  const hours = Math.floor((seconds * 1_000) / HOUR)
  const minutes = Math.floor(((seconds * 1_000) % HOUR) / MINUTE)
  return minutes === 0 ? `${hours}h` : `${hours}h${minutes}m`
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: MINUTE, h: HOUR }

/**
 * Parses `500ms`, `30s`, `2m`, `1h`, a combination (`1m30s`, `1h 5m`) or a plain number of
 * milliseconds; `undefined` when it is none of these or not a positive whole number of ms.
 */
export const parseDuration = (text: string): number | undefined => {
  const trimmed = text.trim().toLowerCase()
  let total: number
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) {
    total = Number(trimmed)
  } else {
    if (!/^(?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+$/.test(trimmed)) return undefined
    total = 0
    for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)\s*(ms|h|m|s)/g)) {
      total += Number(match[1]) * UNIT_MS[match[2]!]!
    }
  }
  const ms = Math.round(total)
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined
}
