// Where templates, skills and instructions are looked for. Alisio's own folders first, then the
// ones users of other agents keep; the project's (more specific) before the user's. A project's
// templates and skills are read only when the project is trusted.

import * as path from "node:path"
import * as Effect from "effect/Effect"
import type { TemplateRoot } from "../commands/templates.js"
import { exists } from "./files.js"
import type { SkillRoot } from "./skills.js"

export interface SourceOptions {
  /** The workspace: project folders are looked for in it. */
  readonly cwd: string
  /** `<config>`: `$ALISIO_HOME`, else `$XDG_CONFIG_HOME/alisio`, else `~/.config/alisio`. */
  readonly configHome: string
  /** The user's home folder, for `~/.claude/…`; left out, those are not read. */
  readonly home?: string | undefined
  /** `--trust-project`: the project's templates and skills are read. */
  readonly trustProject: boolean
}

const projectTemplateFolders = [".alisio/prompts", ".claude/commands"]
const projectSkillFolders = [".alisio/skills", ".claude/skills", ".agents/skills"]

export const templateRoots = (options: SourceOptions): ReadonlyArray<TemplateRoot> => [
  ...(options.trustProject
    ? projectTemplateFolders.map((folder) => ({ folder: path.join(options.cwd, folder), scope: "project" as const }))
    : []),
  { folder: path.join(options.configHome, "prompts"), scope: "user" },
  ...(options.home === undefined
    ? []
    : [{ folder: path.join(options.home, ".claude", "commands"), scope: "user" as const }])
]

export const skillRoots = (options: SourceOptions): ReadonlyArray<SkillRoot> => [
  ...(options.trustProject
    ? projectSkillFolders.map((folder) => ({ folder: path.join(options.cwd, folder), scope: "project" as const }))
    : []),
  { folder: path.join(options.configHome, "skills"), scope: "user" },
  ...(options.home === undefined
    ? []
    : [{ folder: path.join(options.home, ".claude", "skills"), scope: "user" as const }])
]

/** The user's own instructions: the first of these that exists. */
export const userInstructionFiles = (options: SourceOptions): ReadonlyArray<string> => [
  path.join(options.configHome, "AGENTS.md"),
  path.join(options.configHome, "CLAUDE.md"),
  ...(options.home === undefined ? [] : [path.join(options.home, ".claude", "CLAUDE.md")])
]

/** The project's template and skill folders that exist but were not read, because the project is not trusted. */
export const untrustedFolders = (options: SourceOptions): Effect.Effect<ReadonlyArray<string>> =>
  options.trustProject
    ? Effect.succeed([])
    : Effect.filter(
        [...projectTemplateFolders, ...projectSkillFolders].map((folder) => path.join(options.cwd, folder)),
        exists,
        { concurrency: "unbounded" }
      )
