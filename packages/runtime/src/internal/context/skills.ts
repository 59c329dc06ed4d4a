// Skills: folders holding a SKILL.md (front matter `name`, `description`; the body is the skill's
// instructions). Discovery reads only the front matter; the body is read when the model calls the
// `skill` tool or the user runs `/skill:<id>` (progressive disclosure).

import * as path from "node:path"
import * as Effect from "effect/Effect"
import { entries, linksOutside, readPrefix } from "./files.js"
import { type FileDiagnostic, parseFrontMatter, textField } from "./frontMatter.js"
import { allot } from "./instructions.js"

/** A folder whose sub-folders are skills; `user` folders are the person's own, `project` ones the workspace's. */
export interface SkillRoot {
  readonly folder: string
  readonly scope: "user" | "project"
  /** A project's folder: its skills must stay in this folder, links resolved (the person's own may link anywhere). */
  readonly within?: string | undefined
}

export interface Skill {
  /** Its name (`/skill:<id>`, the `skill` tool's `name`): the front matter's `name`, else the folder's. */
  readonly id: string
  readonly description: string
  /** Its SKILL.md. */
  readonly file: string
  /** Its folder: the files its instructions refer to. */
  readonly folder: string
  readonly scope: "user" | "project"
  /** A project's skill: read only while it stays in this folder. */
  readonly within?: string | undefined
}

export interface SkillDiscovery {
  /** The skills in effect: the first folder holding an id wins. */
  readonly skills: ReadonlyArray<Skill>
  /** Skills whose id an earlier folder already held. */
  readonly shadowed: ReadonlyArray<{ readonly skill: Skill; readonly by: Skill }>
  readonly diagnostics: ReadonlyArray<FileDiagnostic>
}

const skillIdPattern = /^[a-z0-9][a-z0-9_-]{0,63}$/
/** The front matter is at the top: this much of a SKILL.md is read to find the skills. */
const FRONT_MATTER_BYTES = 16 * 1024
/** A skill's body is read up to this size. */
const BODY_BYTES = 256 * 1024
/** Longer descriptions are cut in the system context (Agent Skills allow 1024 characters). */
const DESCRIPTION_CHARS = 1024

const idFrom = (name: string): string | undefined => {
  const id = name.trim().toLowerCase().replace(/\s+/g, "-")
  return skillIdPattern.test(id) ? id : undefined
}

const outsideMessage = (target: string, within: string | undefined) =>
  `it links to ${target}, outside the project (${within}), so the skill is not read`

/** The skills of one folder of a root. */
const readSkill = (root: SkillRoot, name: string) =>
  Effect.gen(function* () {
    const folder = path.join(root.folder, name)
    const file = path.join(folder, "SKILL.md")
    const outside = root.within === undefined ? undefined : yield* linksOutside(file, root.within)
    if (outside !== undefined) {
      return { skill: undefined, diagnostics: [{ file, message: outsideMessage(outside, root.within) }] }
    }
    const read = yield* readPrefix(file, FRONT_MATTER_BYTES)
    if (read === undefined) return { skill: undefined, diagnostics: [] }
    const diagnostics: Array<FileDiagnostic> = []
    const report = (message: string) => diagnostics.push({ file, message })
    const matter = parseFrontMatter(read.text)
    // Only the file's start is read: front matter still open there may well close further on.
    const unclosed = read.size > FRONT_MATTER_BYTES && matter.body === read.text && matter.problems.length > 0
    if (unclosed)
      report(`its front matter does not end within the first ${FRONT_MATTER_BYTES / 1024} KiB, so it was not read`)
    else for (const problem of matter.problems) report(problem)
    const given = textField(matter, "name", report)
    const id = (given === undefined ? undefined : idFrom(given)) ?? idFrom(name)
    if (id === undefined) {
      report(
        'neither the field `name` nor the folder\'s name is a skill name (lower-case letters, digits, "-", "_"); the skill is skipped'
      )
      return { skill: undefined, diagnostics }
    }
    if (given !== undefined && idFrom(given) === undefined) {
      report(`the front matter field \`name\` ("${given}") is not a skill name; the folder's name "${id}" is used`)
    }
    const described = textField(matter, "description", report)
    if (described === undefined) {
      report("the front matter has no `description`: the model sees only the skill's name (the skill is still used)")
    }
    const description = (described ?? "").replace(/\s+/g, " ")
    const skill: Skill = {
      id,
      description:
        description.length > DESCRIPTION_CHARS ? `${description.slice(0, DESCRIPTION_CHARS - 1)}…` : description,
      file,
      folder,
      scope: root.scope,
      within: root.within
    }
    return { skill, diagnostics }
  })

/** Every skill under the roots, in order: an id found again in a later root is shadowed. */
export const discoverSkills = (roots: ReadonlyArray<SkillRoot>): Effect.Effect<SkillDiscovery> =>
  Effect.gen(function* () {
    const found = yield* Effect.forEach(
      roots,
      (root) =>
        Effect.flatMap(entries(root.folder), (listed) =>
          Effect.forEach(
            listed.filter((entry) => entry.folder && !entry.name.startsWith(".")),
            (entry) => readSkill(root, entry.name),
            { concurrency: 8 }
          )
        ),
      { concurrency: "unbounded" }
    )
    const skills: Array<Skill> = []
    const shadowed: Array<{ skill: Skill; by: Skill }> = []
    const diagnostics: Array<FileDiagnostic> = []
    const byId = new Map<string, Skill>()
    for (const result of found.flat()) {
      diagnostics.push(...result.diagnostics)
      const skill = result.skill
      if (skill === undefined) continue
      const holder = byId.get(skill.id)
      if (holder === undefined) {
        byId.set(skill.id, skill)
        skills.push(skill)
      } else shadowed.push({ skill, by: holder })
    }
    return { skills, shadowed, diagnostics }
  })

/**
 * A skill's instructions: its SKILL.md without the front matter, read now (it may have changed), or
 * why they cannot be given (unreadable, not text, empty).
 */
export const loadSkillBody = (skill: Skill): Effect.Effect<{ readonly body: string } | { readonly problem: string }> =>
  Effect.gen(function* () {
    const outside = skill.within === undefined ? undefined : yield* linksOutside(skill.file, skill.within)
    if (outside !== undefined) return { problem: `${skill.file}: ${outsideMessage(outside, skill.within)}.` }
    const read = yield* readPrefix(skill.file, BODY_BYTES)
    if (read === undefined) return { problem: `${skill.file} could not be read.` }
    if (read.binary) return { problem: `${skill.file} holds NUL bytes, so it is not text.` }
    const body = parseFrontMatter(read.text).body.trim()
    if (body === "") return { problem: `${skill.file} has no instructions after its front matter.` }
    return {
      body: read.size > BODY_BYTES ? `${body}\n\n[The rest of ${skill.file} was left out: it is over 256 KiB.]` : body
    }
  })

/**
 * What the skills' descriptions may take of every system prompt, in all (Claude Code keeps a budget
 * of 15 000 characters for the same list). Past it, short descriptions stay whole and the longer
 * ones share the rest, so a hundred skills never crowd out the conversation.
 */
export const SKILL_DESCRIPTIONS_CHARS = 16 * 1024

/** The skills as the system context lists them (names and descriptions only). */
export const skillsSection = (skills: ReadonlyArray<Skill>): string => {
  const allowed = allot(
    skills.map((skill) => skill.description.length),
    SKILL_DESCRIPTIONS_CHARS
  )
  const line = (skill: Skill, index: number) => {
    const room = allowed[index]!
    if (skill.description === "") return `- ${skill.id}: (no description)`
    if (room >= skill.description.length) return `- ${skill.id}: ${skill.description}`
    return room < 2 ? `- ${skill.id}` : `- ${skill.id}: ${skill.description.slice(0, room - 1)}…`
  }
  return [
    "# Skills",
    "Skills are instructions for particular kinds of tasks. When a task matches a skill's description, " +
      "call the `skill` tool with its name to load its instructions before you start, and follow them.",
    ...skills.map(line)
  ].join("\n")
}
