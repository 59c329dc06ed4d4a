// How memories read in tool results, command output and the injected context.
import type { MemoryRecord, SearchHit } from "../MemoryStore.js"
import type { Project } from "./project.js"

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

/** Whether `record` is a project memory of another workspace than `project`. */
export const ofAnotherProject = (record: MemoryRecord, project: Project): boolean =>
  record.scope === "project" && record.project !== project.id && record.project !== project.ownId

const labels = (record: MemoryRecord, project?: Project): string =>
  [
    record.type,
    ...(record.scope === "personal" ? ["personal"] : []),
    ...(project !== undefined && ofAnotherProject(record, project) ? ["another workspace"] : [])
  ].join(", ")

/** A search hit on one line; given the searching `project`, another workspace's memory says so. */
export const hitLine = (hit: SearchHit, now: number, project?: Project): string =>
  `#${hit.record.id} ${headline(hit.record)} [${labels(hit.record, project)}] ${age(now, hit.record.updatedAt)}: ${oneLine(hit.snippet)}`

export const recordLine = (record: MemoryRecord, now: number): string =>
  `#${record.id} ${headline(record)} [${labels(record)}] ${age(now, record.updatedAt)}`

/** A memory in full; given the reading `project`, another workspace's memory says so. */
export const recordText = (record: MemoryRecord, now: number, project?: Project): string =>
  [
    `#${record.id} ${headline(record)}`,
    [
      `type: ${record.type}`,
      project !== undefined && ofAnotherProject(record, project)
        ? "scope: project (another workspace; it can be forgotten only there)"
        : `scope: ${record.scope}`,
      ...(record.topicKey === null ? [] : [`topic_key: ${record.topicKey}`]),
      `saved ${age(now, record.createdAt)}`,
      ...(record.updatedAt === record.createdAt ? [] : [`updated ${age(now, record.updatedAt)}`]),
      ...(record.deletedAt === null ? [] : [`forgotten ${age(now, record.deletedAt)}`])
    ].join(" · "),
    "",
    record.content
  ].join("\n")
