const MINUTE = 60_000
const HOUR = 60 * MINUTE

const startOfDay = (ms: number): number => {
  const day = new Date(ms)
  day.setHours(0, 0, 0, 0)
  return day.getTime()
}

/** Whole local calendar days from `then` to `now` (a day may be 23 or 25 hours long). */
const calendarDays = (then: number, now: number): number =>
  Math.round((startOfDay(now) - startOfDay(then)) / (24 * HOUR))

const twoDigits = (n: number) => String(n).padStart(2, "0")

/**
 * When something happened, as a person says it in their time zone: "just now", "3 min ago",
 * "2 h ago", "yesterday", "4 days ago", then "Mar 3" and, another year, "2025-03-03".
 */
export const relativeTime = (then: number, now: number): string => {
  const ago = now - then
  if (ago < 45_000) return "just now"
  const days = calendarDays(then, now)
  if (ago < HOUR) return `${Math.max(1, Math.round(ago / MINUTE))} min ago`
  if (days === 0) return `${Math.floor(ago / HOUR)} h ago`
  if (days === 1) return "yesterday"
  if (days < 7) return `${days} days ago`
  const date = new Date(then)
  if (date.getFullYear() === new Date(now).getFullYear()) {
    return date.toLocaleDateString("en-US", { month: "short", day: "numeric" })
  }
  return `${date.getFullYear()}-${twoDigits(date.getMonth() + 1)}-${twoDigits(date.getDate())}`
}

/** A local date and time to the minute: `2026-03-03 14:05`. */
export const localTime = (ms: number): string => {
  const date = new Date(ms)
  return `${date.getFullYear()}-${twoDigits(date.getMonth() + 1)}-${twoDigits(date.getDate())} ${twoDigits(
    date.getHours()
  )}:${twoDigits(date.getMinutes())}`
}
