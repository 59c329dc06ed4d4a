// Where templates, skills and instructions are looked for. Alisio's own folders first, then the
// ones users of other agents keep; the project's (more specific) before the user's. A project's
// templates and skills are read only when the project is trusted.

import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type { TemplateRoot } from "../commands/templates.js"
import { exists } from "./files.js"
import { projectBoundary } from "./instructions.js"
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

/** The folder the trusted project's templates and skills must stay in; none when the project is not trusted. */
const boundary = (options: SourceOptions): Effect.Effect<string | undefined> =>
  options.trustProject ? projectBoundary(options.cwd, options.home ?? os.homedir()) : Effect.succeed(undefined)

const roots = (options: SourceOptions, projectFolders: ReadonlyArray<string>, userFolders: ReadonlyArray<string>) =>
  Effect.map(boundary(options), (within) => [
    ...(within === undefined
      ? []
      : projectFolders.map((folder) => ({
          folder: path.join(options.cwd, folder),
          scope: "project" as const,
          within
        }))),
    ...userFolders.map((folder) => ({ folder, scope: "user" as const }))
  ])

const userFolders = (options: SourceOptions, own: string, claude: string) => [
  path.join(options.configHome, own),
  ...(options.home === undefined ? [] : [path.join(options.home, ".claude", claude)])
]

export const templateRoots = (options: SourceOptions): Effect.Effect<ReadonlyArray<TemplateRoot>> =>
  roots(options, projectTemplateFolders, userFolders(options, "prompts", "commands"))

export const skillRoots = (options: SourceOptions): Effect.Effect<ReadonlyArray<SkillRoot>> =>
  roots(options, projectSkillFolders, userFolders(options, "skills", "skills"))

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
