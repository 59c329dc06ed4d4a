import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { loadSkillBody, type Skill } from "../internal/context/skills.js"

const Input = Schema.Struct({
  name: Schema.String.annotations({ description: "The skill's name, as the system prompt lists it." })
})

/** The skill `name` means: its id, or `skill:<id>` as the command is written. */
export const findSkill = (skills: ReadonlyArray<Skill>, name: string): Skill | undefined => {
  const id = name.trim().replace(/^\/?skill:/, "")
  return skills.find((skill) => skill.id === id)
}

/** The text a skill's body reaches the model with: where it comes from, and where its files are. */
export const skillText = (skill: Skill, body: string): string =>
  [`The skill "${skill.id}" (${skill.file}):`, "", body, "", `Files the skill refers to are in ${skill.folder}.`].join(
    "\n"
  )

/**
 * `skill` (core, effect `read`): loads a skill's instructions when the model picks it from the list
 * in the system context (progressive disclosure). Offered only when there is a skill.
 */
export const make = (skills: ReadonlyArray<Skill>): Tool =>
  defineTool({
    name: "skill",
    description:
      "Loads the instructions of a skill listed under Skills in the system prompt. Call it with the skill's " +
      "name before working on a task the skill's description matches, then follow the instructions.",
    effect: "read",
    input: Input,
    run: ({ name }) =>
      Effect.gen(function* () {
        const skill = findSkill(skills, name)
        if (skill === undefined) {
          return yield* new ToolError({
            message: `No skill is named ${JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}…` : name)}. The skills are: ${skills.map((s) => s.id).join(", ")}.`
          })
        }
        const read = yield* loadSkillBody(skill)
        if ("problem" in read) {
          return yield* new ToolError({ message: `The skill "${skill.id}" cannot be used: ${read.problem}` })
        }
        return textResult(skillText(skill, read.body))
      })
  })
