// /init [focus]: asks the model to write the workspace's AGENTS.md, the instructions every later
// run reads (ProjectInstructions), from what the repository shows.

import * as Effect from "effect/Effect"
import type { CoreCommand } from "../entry.js"

/** The task `/init` gives the model, for the workspace `cwd`. */
export const initPrompt = (cwd: string, focus: string): string =>
  [
    `Write an AGENTS.md file at the root of this workspace (${cwd}) for the coding agents that will work in it.`,
    "Read the repository first: its README, build and package files, CI configuration, source layout and tests, and any AGENTS.md, CLAUDE.md, .cursorrules or .github/copilot-instructions.md already there.",
    "Then write down what an agent needs and cannot find out quickly:",
    "- the commands that install, build, lint, format and test (all tests, and one test alone);",
    "- the layout: where the code, the tests and the docs are, and what the main modules do;",
    "- the conventions the code and the commits follow;",
    "- what would surprise a newcomer: set-up steps, generated files not to edit by hand, required services or environment variables.",
    "",
    "Keep it short (under about 150 lines) and true of this repository: no advice that would fit any project.",
    "If AGENTS.md exists, improve it: keep what is still true, correct what is not, and add what is missing.",
    ...(focus === "" ? [] : [`Give particular attention to: ${focus}`])
  ].join("\n")

export const init: CoreCommand = {
  name: "init",
  description: "Ask the model to write the workspace's AGENTS.md (the instructions every run reads)",
  argumentHint: "[focus]",
  run: (invocation) => Effect.succeed({ _tag: "Prompt", prompt: initPrompt(invocation.cwd, invocation.args.trim()) })
}
