// "Yes, and don't ask again for this session": the standing approvals a person gave, kept per
// session for the life of the process. A grant names a tool, a command prefix for bash, or a
// folder outside the workspace.
import * as path from "node:path"
import type { ApprovalRequest } from "@alisio/runtime/Interaction"

// Commands whose second word says what they do (`git status` is not `git push`).
const TWO_WORD = new Set([
  "git",
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "npx",
  "cargo",
  "go",
  "docker",
  "kubectl",
  "pip",
  "python",
  "python3",
  "node",
  "make",
  "gh",
  "uv",
  "poetry",
  "deno"
])

/** Text a shell would read as more than one simple command, or with substitutions and redirections. */
const COMPOUND = /[;&|`$<>(){}\n\\]/

const commandOf = (request: ApprovalRequest): string | undefined => {
  if (request.tool !== "bash" || request.arguments === undefined) return undefined
  try {
    const parsed = JSON.parse(request.arguments) as { readonly command?: unknown }
    return typeof parsed.command === "string" ? parsed.command : undefined
  } catch {
    return undefined
  }
}

/** The prefix a bash grant would cover (`git status`), or none for a compound command. */
export const commandPrefix = (command: string): string | undefined => {
  const trimmed = command.trim()
  if (trimmed === "" || COMPOUND.test(trimmed)) return undefined
  const words = trimmed.split(/\s+/)
  const first = words[0]!
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) return undefined
  return TWO_WORD.has(first) && words[1] !== undefined && !words[1].startsWith("-") ? `${first} ${words[1]}` : first
}

/** What "always" would grant for this request, said for the person; none when it cannot be narrowed safely. */
export interface GrantOffer {
  readonly key: string
  readonly label: string
}

export const offerFor = (request: ApprovalRequest): GrantOffer | undefined => {
  if (request.kind === "external_directory") {
    if (request.path === undefined) return undefined
    const folder = path.dirname(request.path)
    return { key: `dir:${folder}`, label: `access to ${folder}` }
  }
  if (request.tool === undefined) return undefined
  if (request.tool === "bash") {
    const command = commandOf(request)
    const prefix = command === undefined ? undefined : commandPrefix(command)
    return prefix === undefined ? undefined : { key: `bash:${prefix}`, label: `\`${prefix}\` commands` }
  }
  return { key: `tool:${request.tool}`, label: `${request.tool}` }
}

const covers = (key: string, request: ApprovalRequest): boolean => {
  if (key.startsWith("dir:")) {
    if (request.kind !== "external_directory" || request.path === undefined) return false
    const folder = key.slice(4)
    return request.path === folder || request.path.startsWith(folder + path.sep)
  }
  if (request.kind !== "tool") return false
  if (key.startsWith("bash:")) {
    const command = commandOf(request)
    if (command === undefined) return false
    const prefix = commandPrefix(command)
    return prefix !== undefined && prefix === key.slice(5)
  }
  return key === `tool:${request.tool}`
}

export class Grants {
  private readonly bySession = new Map<string, Set<string>>()
  private active = new Set<string>()

  /** The session the conversation goes on in now (undefined: a new one whose id is not known yet). */
  switchTo(sessionId: string | undefined): void {
    this.active = sessionId === undefined ? new Set() : (this.bySession.get(sessionId) ?? new Set())
    if (sessionId !== undefined) this.bySession.set(sessionId, this.active)
  }

  /** A new session got its id: the grants given before it are its own. */
  adopt(sessionId: string): void {
    if (!this.bySession.has(sessionId)) this.bySession.set(sessionId, this.active)
  }

  grant(key: string): void {
    this.active.add(key)
  }

  allows(request: ApprovalRequest): boolean {
    for (const key of this.active) if (covers(key, request)) return true
    return false
  }

  get size(): number {
    return this.active.size
  }
}
