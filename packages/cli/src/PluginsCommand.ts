import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { loadSetup, runtimeLayer } from "./App.js"
import { ExitCode, setExitCode } from "./CliError.js"
import type { PluginFlags } from "./Plugins.js"

const encodeReport = Schema.encodeSync(PluginHost.PluginReport)

const status = (report: PluginHost.PluginReport): string =>
  report.loaded ? "loaded" : !report.trusted ? "not trusted" : !report.enabled ? "disabled" : "failed"

/** `alisio plugins list`: every plugin the host knows of, what it registered and what went wrong. */
export const listPlugins = (flags: {
  readonly json: boolean
  readonly plugin: ReadonlyArray<string>
  readonly disablePlugin: ReadonlyArray<string>
  readonly trustProject: boolean
  readonly readOnly: boolean
}) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({ trustProject: flags.trustProject })
    const plugins: PluginFlags = {
      plugins: flags.plugin,
      disabled: flags.disablePlugin,
      readOnly: flags.readOnly,
      trustProject: flags.trustProject
    }
    const program = Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const reports = yield* host.plugins
      const winners = yield* host.extensions.winners
      // As `run` shows them: what the plugins warned of while setting up, such as an unknown key.
      const notifications = yield* Effect.flatMap(PluginUi.PluginUi, (ui) => ui.notifications)
      for (const notification of notifications)
        if (notification.level !== "info") process.stderr.write(`${PluginUi.formatNotification(notification)}\n`)
      // As `mcp list`: a script checking its plugins learns of a failed one from the exit code.
      if (reports.some((report) => status(report) === "failed")) setExitCode(ExitCode.failed)
      if (flags.json) {
        const document = {
          plugins: reports.map((report) => encodeReport(report)),
          extensions: winners.map((winner) => ({
            point: winner.point,
            ...(winner.pluginId === undefined ? {} : { pluginId: winner.pluginId, priority: winner.priority })
          }))
        }
        process.stdout.write(`${JSON.stringify(document, null, 2)}\n`)
        return
      }
      const lines: Array<string> = []
      for (const report of reports) {
        const version = report.version === undefined ? "" : ` ${report.version}`
        const from = report.source === "builtin" ? "builtin" : `external, ${report.from}`
        lines.push(`${report.id}${version}  (${from})  ${status(report)}`)
        if (report.description !== undefined) lines.push(`  ${report.description}`)
        if (report.tools.length > 0) lines.push(`  tools: ${report.tools.join(", ")}`)
        if (report.commands.length > 0)
          lines.push(`  commands: ${report.commands.map((name) => `/${name}`).join(", ")}`)
        if (report.providers.length > 0) lines.push(`  providers: ${report.providers.join(", ")}`)
        for (const diagnostic of report.diagnostics) lines.push(`  ! ${diagnostic}`)
      }
      if (reports.length === 0) lines.push("No plugins.")
      lines.push(
        "",
        winners
          .map(
            (winner) => `${winner.point}: ${winner.pluginId === undefined ? "default" : `plugin ${winner.pluginId}`}`
          )
          .join(", ")
      )
      // What a plugin says of itself is text only.
      process.stdout.write(`${terminalSafe(lines.join("\n"))}\n`)
    })
    yield* program.pipe(Effect.provide(runtimeLayer(setup, { approveAll: false, plugins, quiet: true })))
  })
