// How memories read in tool results, command output and the injected context.
import type { MemoryRecord, SearchHit } from "../MemoryStore.js"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

export const age = (now: number, then: number): string => {
  const elapsed = Math.max(0, now - then)
  const count = (amount: number, unit: string) => `${amount} ${unit}${amount === 1 ? "" : "s"} ago`
  if (elapsed < MINUTE) return "just now"
  if (elapsed < HOUR) return count(Math.floor(elapsed / MINUTE), "minute")
  if (elapsed < DAY) return count(Math.floor(elapsed / HOUR), "hour")
  return count(Math.floor(elapsed / DAY), "day")
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/** `text` on one line, at most `max` characters, with `…` when cut. */
export const excerpt = (text: string, max: number): string => {
  const line = oneLine(text)
  return line.length <= max ? line : `${line.slice(0, Math.max(0, max - 1)).trimEnd()}…`
}

export const headline = (record: MemoryRecord): string =>
  record.title !== "" ? record.title : excerpt(record.content, 60)

const labels = (record: MemoryRecord): string =>
  [record.type, ...(record.scope === "personal" ? ["personal"] : [])].join(", ")

export const hitLine = (hit: SearchHit, now: number): string =>
  `#${hit.record.id} ${headline(hit.record)} [${labels(hit.record)}] ${age(now, hit.record.updatedAt)}: ${oneLine(hit.snippet)}`

export const recordLine = (record: MemoryRecord, now: number): string =>
  `#${record.id} ${headline(record)} [${labels(record)}] ${age(now, record.updatedAt)}`

export const recordText = (record: MemoryRecord, now: number): string =>
  [
    `#${record.id} ${headline(record)}`,
    [
      `type: ${record.type}`,
      `scope: ${record.scope}`,
      ...(record.topicKey === null ? [] : [`topic_key: ${record.topicKey}`]),
      `saved ${age(now, record.createdAt)}`,
      ...(record.updatedAt === record.createdAt ? [] : [`updated ${age(now, record.updatedAt)}`]),
      ...(record.deletedAt === null ? [] : [`forgotten ${age(now, record.deletedAt)}`])
    ].join(" · "),
    "",
    record.content
  ].join("\n")
