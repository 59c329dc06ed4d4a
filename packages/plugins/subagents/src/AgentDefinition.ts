// Agent definitions: Markdown with YAML front matter, the body being the system prompt. Files
// written for Claude Code and opencode are read as they are: their tool names are mapped to
// Alisio's, what maps to nothing is left out with a warning, unknown keys warn, and a broken file
// is a diagnostic naming the file, the line and the field.
import * as path from "node:path"
import * as Predicate from "effect/Predicate"
import {
  claudeAliases,
  cosmeticKeys,
  foreignKeys,
  splitTools,
  toolNames,
  unmapped
} from "./internal/foreignAgentFiles.js"
import { type FrontMatterError, parseFrontMatter, type YamlMap, type YamlValue } from "./internal/frontMatter.js"

/** An approval choice in an agent file (`permission: { write: ask }`). */
export type Permission = "allow" | "ask" | "deny"

/** Where a definition was found, in discovery order (first wins). */
export type AgentSource = "project" | "project-claude" | "user" | "user-claude" | "plugin" | "builtin"

export interface AgentDefinition {
  readonly name: string
  readonly description: string
  /** The system prompt. */
  readonly prompt: string
  /** Alisio tool names, or `*` for every tool of the parent. */
  readonly tools: "*" | ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  /** Agents it may delegate to (`Task(a, b)` in a Claude Code file); any when absent. */
  readonly delegates?: ReadonlyArray<string> | undefined
  /** `provider/model`, or a model of the parent's provider; the parent's model when absent. */
  readonly model?: string | undefined
  readonly maxTurns?: number | undefined
  readonly readOnly: boolean
  readonly permission: { readonly write?: Permission | undefined; readonly process?: Permission | undefined }
  readonly isolation?: "worktree" | undefined
  readonly background: boolean
  readonly source: AgentSource
  /** The file it was read from (absent for builtins). */
  readonly file?: string | undefined
}

/** Something wrong or ignored in an agent file. An `error` leaves the agent out. */
export interface AgentDiagnostic {
  readonly file: string
  readonly line?: number | undefined
  readonly field?: string | undefined
  readonly severity: "warning" | "error"
  readonly message: string
}

export const formatDiagnostic = (d: AgentDiagnostic): string =>
  `${d.file}${d.line === undefined ? "" : `:${d.line}`}: ${d.field === undefined ? "" : `${d.field}: `}${d.message}`

const known = new Set([
  "name",
  "description",
  "tools",
  "disallowedTools",
  "model",
  "maxTurns",
  "readOnly",
  "permission",
  "permissions",
  "permissionMode",
  "isolation",
  "background",
  "mode"
])

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

type Parsed = { readonly agent?: AgentDefinition | undefined; readonly diagnostics: ReadonlyArray<AgentDiagnostic> }

const describe = (value: YamlValue): string => JSON.stringify(value)

/** Reads one agent file's text; `file` names it in diagnostics and gives the default name. */
export const parseAgentFile = (file: string, text: string, source: AgentSource): Parsed => {
  const diagnostics: Array<AgentDiagnostic> = []
  const warn = (message: string, field?: string, line?: number) =>
    diagnostics.push({ file, field, line, severity: "warning", message })
  const error = (message: string, field?: string, line?: number): Parsed => ({
    diagnostics: [...diagnostics, { file, field, line, severity: "error", message }]
  })

  let parsed: ReturnType<typeof parseFrontMatter>
  try {
    parsed = parseFrontMatter(text)
  } catch (cause) {
    if (!Predicate.isTagged(cause, "FrontMatterError")) throw cause
    const failure = cause as FrontMatterError
    return error(`the front matter is not valid YAML: ${failure.reason}`, undefined, failure.line)
  }
  if (!parsed.hasFrontMatter) warn('no front matter ("---" block): the whole file is the prompt')

  const fields = new Map(parsed.entries.map((entry) => [entry.key, entry]))
  const lineOf = (key: string) => fields.get(key)?.line
  const get = (key: string) => fields.get(key)?.value

  const stem = path.basename(file).replace(/\.md$/i, "")
  const name = get("name") ?? stem
  if (typeof name !== "string" || !namePattern.test(name)) {
    return error(
      `expected a name of letters, digits, "-", "_" and ".", got ${describe(name ?? null)}`,
      "name",
      lineOf("name")
    )
  }
  const descriptionValue = get("description")
  if (descriptionValue !== undefined && descriptionValue !== null && typeof descriptionValue !== "string") {
    return error(`expected text, got ${describe(descriptionValue)}`, "description", lineOf("description"))
  }
  const description = typeof descriptionValue === "string" ? descriptionValue.trim() : ""
  if (description === "") warn("no description: the model is not told when to use this agent", "description")

  for (const entry of parsed.entries) {
    if (known.has(entry.key) || cosmeticKeys.has(entry.key)) continue
    const why = foreignKeys[entry.key]
    warn(why === undefined ? "unknown key, ignored" : `ignored: ${why}`, entry.key, entry.line)
  }

  const mode = get("mode")
  if (mode === "primary") {
    return error("mode primary: a main agent, not a subagent; it is not offered", "mode", lineOf("mode"))
  }

  // tools
  let tools: "*" | Array<string> = "*"
  const disallowed: Array<string> = []
  let delegates: Array<string> | undefined
  const mapTool = (raw: string, field: string): string | undefined => {
    const name = raw.trim()
    if (name === "" || name === "*") return name === "*" ? "*" : undefined
    const pattern = /^([A-Za-z_]+)\((.*)\)$/.exec(name)
    if (pattern !== null) {
      const base = toolNames[pattern[1]!]
      if (base === "task") {
        if (field === "tools") {
          delegates = [
            ...(delegates ?? []),
            ...pattern[2]!
              .split(",")
              .map((s) => s.trim())
              .filter((s) => s !== "")
          ]
        }
        return "task"
      }
      if (base !== undefined) {
        warn(
          `${name}: the argument pattern is not enforced; ${base} is offered whole (its approvals still apply)`,
          field,
          lineOf(field)
        )
        return base
      }
    }
    const mapped = toolNames[name]
    if (mapped !== undefined) return mapped
    if (unmapped.has(name)) {
      warn(`${name} has no equivalent in Alisio; left out`, field, lineOf(field))
      return undefined
    }
    if (/^[A-Z]/.test(name) && !name.startsWith("mcp__")) {
      warn(`${name} is not a tool Alisio knows; left out`, field, lineOf(field))
      return undefined
    }
    return name
  }
  const list = (value: YamlValue): Array<string> | undefined => {
    if (typeof value === "string") return splitTools(value)
    if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value as Array<string>
    return undefined
  }
  const toolsValue = get("tools")
  if (toolsValue !== undefined && toolsValue !== null) {
    if (typeof toolsValue === "object" && !Array.isArray(toolsValue)) {
      // opencode: `tools: { write: false }` turns tools off; the rest are the parent's.
      for (const [key, enabled] of Object.entries(toolsValue as YamlMap)) {
        if (typeof enabled !== "boolean") return error(`expected true or false for ${key}`, "tools", lineOf("tools"))
        if (key.includes("*")) {
          warn(`${key}: tool name patterns are not supported; ignored`, "tools", lineOf("tools"))
          continue
        }
        if (!enabled) {
          const mapped = mapTool(key, "tools")
          if (mapped !== undefined && mapped !== "*") disallowed.push(mapped)
        }
      }
    } else {
      const names = list(toolsValue)
      if (names === undefined) {
        return error(
          `expected "*", a comma-separated list or a list of tool names, got ${describe(toolsValue)}`,
          "tools",
          lineOf("tools")
        )
      }
      const mapped = names.map((n) => mapTool(n, "tools")).filter((n): n is string => n !== undefined)
      tools = mapped.includes("*") ? "*" : [...new Set(mapped)]
    }
  }
  const disallowedValue = get("disallowedTools")
  if (disallowedValue !== undefined && disallowedValue !== null) {
    const names = list(disallowedValue)
    if (names === undefined) {
      return error(
        `expected a comma-separated list or a list of tool names, got ${describe(disallowedValue)}`,
        "disallowedTools",
        lineOf("disallowedTools")
      )
    }
    for (const n of names) {
      const mapped = mapTool(n, "disallowedTools")
      if (mapped !== undefined && mapped !== "*") disallowed.push(mapped)
    }
  }

  // model
  const modelValue = get("model")
  let model: string | undefined
  if (modelValue !== undefined && modelValue !== null) {
    if (typeof modelValue !== "string")
      return error(`expected "inherit" or "provider/model", got ${describe(modelValue)}`, "model", lineOf("model"))
    const trimmed = modelValue.trim()
    if (claudeAliases.has(trimmed)) {
      warn(
        `${trimmed} is a Claude Code alias; the parent's model is used (write provider/model to choose one)`,
        "model",
        lineOf("model")
      )
    } else if (trimmed !== "inherit" && trimmed !== "") {
      model = trimmed
    }
  }

  const maxTurnsValue = get("maxTurns")
  let maxTurns: number | undefined
  if (maxTurnsValue !== undefined && maxTurnsValue !== null) {
    if (typeof maxTurnsValue !== "number" || !Number.isInteger(maxTurnsValue) || maxTurnsValue < 1) {
      return error(`expected a positive whole number, got ${describe(maxTurnsValue)}`, "maxTurns", lineOf("maxTurns"))
    }
    maxTurns = maxTurnsValue
  }

  const flag = (key: string): boolean | Parsed => {
    const value = get(key)
    if (value === undefined || value === null) return false
    if (typeof value !== "boolean") return error(`expected true or false, got ${describe(value)}`, key, lineOf(key))
    return value
  }
  const readOnlyFlag = flag("readOnly")
  if (typeof readOnlyFlag !== "boolean") return readOnlyFlag
  const backgroundFlag = flag("background")
  if (typeof backgroundFlag !== "boolean") return backgroundFlag
  let readOnly = readOnlyFlag

  // permission (Alisio: write / process; opencode v1: edit / bash), permissions (opencode v2), permissionMode (Claude Code)
  const permission: { write?: Permission; process?: Permission } = {}
  const asPermission = (value: YamlValue, field: string): Permission | undefined | Parsed => {
    if (value === "allow" || value === "ask" || value === "deny") return value
    if (typeof value === "object" && value !== null) {
      warn("per-command rules are not supported; the parent's approvals apply", field, lineOf(field.split(".")[0]!))
      return undefined
    }
    return error(`expected allow, ask or deny, got ${describe(value)}`, field, lineOf(field.split(".")[0]!))
  }
  const permissionValue = get("permission")
  if (permissionValue !== undefined && permissionValue !== null) {
    if (typeof permissionValue !== "object" || Array.isArray(permissionValue)) {
      return error(
        `expected a mapping such as { write: ask, process: deny }, got ${describe(permissionValue)}`,
        "permission",
        lineOf("permission")
      )
    }
    for (const [key, value] of Object.entries(permissionValue as YamlMap)) {
      const target =
        key === "write" || key === "edit" ? "write" : key === "process" || key === "bash" ? "process" : undefined
      if (target === undefined) {
        warn(
          `permission.${key} is not something Alisio asks about (write, process); ignored`,
          `permission.${key}`,
          lineOf("permission")
        )
        continue
      }
      const policy = asPermission(value, `permission.${key}`)
      if (typeof policy === "object") return policy
      if (policy !== undefined) permission[target] = policy
    }
  }
  const permissionsValue = get("permissions")
  if (Array.isArray(permissionsValue)) {
    for (const rule of permissionsValue) {
      const entry = rule as YamlMap
      const target = entry?.action === "edit" ? "write" : entry?.action === "shell" ? "process" : undefined
      if (target === undefined || (entry.resource !== undefined && entry.resource !== "*")) {
        warn(`the rule ${JSON.stringify(rule)} is not supported; ignored`, "permissions", lineOf("permissions"))
        continue
      }
      const policy = asPermission(entry.effect ?? null, "permissions")
      if (typeof policy === "object") return policy
      if (policy !== undefined) permission[target] = policy
    }
  } else if (permissionsValue !== undefined && permissionsValue !== null) {
    return error("expected a list of { action, resource, effect } rules", "permissions", lineOf("permissions"))
  }
  const modeValue = get("permissionMode")
  if (modeValue !== undefined && modeValue !== null) {
    if (modeValue === "plan") readOnly = true
    else if (modeValue === "acceptEdits") permission.write ??= "allow"
    else if (modeValue === "bypassPermissions") {
      permission.write ??= "allow"
      permission.process ??= "allow"
    } else if (modeValue !== "default") {
      warn(
        `${describe(modeValue)} is not supported; the parent's approvals apply`,
        "permissionMode",
        lineOf("permissionMode")
      )
    }
  }

  const isolationValue = get("isolation")
  let isolation: "worktree" | undefined
  if (isolationValue !== undefined && isolationValue !== null && isolationValue !== "none") {
    if (isolationValue !== "worktree") {
      return error(`expected worktree or none, got ${describe(isolationValue)}`, "isolation", lineOf("isolation"))
    }
    isolation = "worktree"
  }

  const prompt = parsed.body
  if (prompt === "") warn("the body is empty: the agent has no instructions of its own")

  return {
    diagnostics,
    agent: {
      name,
      description,
      prompt,
      tools,
      disallowedTools: [...new Set(disallowed)],
      delegates,
      model,
      maxTurns,
      readOnly,
      permission,
      isolation,
      background: backgroundFlag,
      source,
      file
    }
  }
}
