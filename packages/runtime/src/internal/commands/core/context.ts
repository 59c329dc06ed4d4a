// /context: what goes into the system context of the session's next run, from where, and how big.

import * as Effect from "effect/Effect"
import { SystemContext } from "../../../SystemContext.js"
import type { CoreCommand } from "../entry.js"
import { untrustedNote } from "./listings.js"
import { columns, formatBytes, text } from "./shared.js"

export const context: CoreCommand = {
  name: "context",
  description: "Show what goes into the system context and where each part comes from, with sizes",
  run: (invocation) =>
    Effect.gen(function* () {
      const system = yield* SystemContext
      const built = yield* system.build({
        sessionId: invocation.sessionId,
        prompt: "",
        model: invocation.defaultModel ?? ""
      })
      const instructions = yield* system.instructions
      const size = (value: string) => Buffer.byteLength(value)
      const rows = built.parts.map((part) => [part.kind, formatBytes(size(part.text)), part.name, part.source])
      const lines = [
        `The system context of a run in ${invocation.cwd}: ${formatBytes(size(built.text))} in all.`,
        ...columns(rows, "  "),
        "",
        `Instruction files: the user's (${system.options.configHome}/AGENTS.md), then AGENTS.md (or CLAUDE.md) of each folder from ${
          instructions.repositoryRoot === undefined
            ? "the workspace (not in a git repository)"
            : `the repository root ${instructions.repositoryRoot} down to the workspace`
        }; ${formatBytes(instructions.capBytes)} at most.`,
        ...built.notices.map((notice) => `! ${notice}`),
        ...untrustedNote(system.untrusted)
      ]
      return text(lines.join("\n"))
    })
}
