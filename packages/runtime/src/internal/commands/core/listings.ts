// What this Alisio has to work with: /tools (with each tool's origin), /skills, /plugins.

import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { McpServers } from "../../../McpServers.js"
import { PluginHost } from "../../../PluginHost.js"
import { SystemContext } from "../../../SystemContext.js"
import { describeOrigin } from "../../../ToolOrigins.js"
import { Tools } from "../../../Tools.js"
import { formatDiagnostic } from "../../context/frontMatter.js"
import type { CoreCommand } from "../entry.js"
import { columns, text } from "./shared.js"

export const tools: CoreCommand = {
  name: "tools",
  description: "List the tools the model can call, with their effect and where each comes from",
  run: () =>
    Effect.gen(function* () {
      // MCP servers' tools are known once the servers run: they start here as for a run (MCP-1).
      const mcp = yield* Effect.serviceOption(McpServers)
      if (Option.isSome(mcp)) yield* mcp.value.ready
      const entries = yield* (yield* Tools).entries
      if (entries.length === 0) return text("No tools.")
      const rows = [...entries]
        .sort(
          (a, b) =>
            describeOrigin(a.origin).localeCompare(describeOrigin(b.origin)) || a.tool.name.localeCompare(b.tool.name)
        )
        .map((entry) => [entry.tool.name, entry.tool.effect, describeOrigin(entry.origin)])
      return text([`${entries.length} tools (name, effect, origin):`, ...columns(rows, "  ")].join("\n"))
    })
}

/** Where the project's folders were left unread, and how to read them. */
export const untrustedNote = (folders: ReadonlyArray<string>): ReadonlyArray<string> =>
  folders.length === 0
    ? []
    : [`Not read (the project is not trusted; --trust-project reads them): ${folders.join(", ")}`]

export const skills: CoreCommand = {
  name: "skills",
  description:
    "List the skills: their names and descriptions go into the system context, their instructions load on use",
  run: () =>
    Effect.gen(function* () {
      const context = yield* SystemContext
      const { diagnostics, shadowed, skills } = context.skills
      const lines =
        skills.length === 0
          ? [
              "No skills. A skill is a folder with a SKILL.md in <config>/skills/ (or a trusted project's .alisio/skills/)."
            ]
          : [
              `${skills.length} skills (the model loads one with the skill tool; /skill:<name> runs one):`,
              ...columns(
                skills.map((skill) => [skill.id, skill.description === "" ? "(no description)" : skill.description]),
                "  "
              ),
              "",
              "From:",
              ...skills.map((skill) => `  ${skill.id}: ${skill.file}`)
            ]
      for (const { by, skill } of shadowed) lines.push(`  ${skill.id}: ${skill.file} (shadowed by ${by.file})`)
      for (const diagnostic of diagnostics) lines.push(`! ${formatDiagnostic(diagnostic)}`)
      lines.push(...untrustedNote(context.untrusted))
      return text(lines.join("\n"))
    })
}

const status = (report: { loaded: boolean; trusted: boolean; enabled: boolean }) =>
  report.loaded ? "loaded" : !report.trusted ? "not trusted" : !report.enabled ? "disabled" : "failed"

export const plugins: CoreCommand = {
  name: "plugins",
  description: "List the plugins, where each comes from, and what it registered",
  run: () =>
    Effect.gen(function* () {
      const host = yield* Effect.serviceOption(PluginHost)
      if (Option.isNone(host)) return text("Plugins are not loaded here.")
      const reports = yield* host.value.plugins
      if (reports.length === 0) return text("No plugins.")
      const lines: Array<string> = []
      for (const report of reports) {
        const from = report.source === "builtin" ? "builtin" : `external, ${report.from}`
        lines.push(
          `${report.id}${report.version === undefined ? "" : ` ${report.version}`}  (${from})  ${status(report)}`
        )
        if (report.tools.length > 0) lines.push(`  tools: ${report.tools.join(", ")}`)
        if (report.commands.length > 0)
          lines.push(`  commands: ${report.commands.map((name) => `/${name}`).join(", ")}`)
        for (const diagnostic of report.diagnostics) lines.push(`  ! ${diagnostic}`)
      }
      return text(lines.join("\n"))
    })
}
