// Plugins' panels (`api.ui.panel`, CH-4: an agent tree, say) in a region under the conversation,
// and the PluginUi the UI binds: notifications and diagnostics become notices in the conversation.
import { formatDiagnostic, type PluginNotification, type PluginPanel, PluginUi } from "@alisio/runtime/PluginUi"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Component, truncateToWidth } from "./PiTuiCore.js"
import { sanitize } from "./Sanitize.js"
import type { Theme } from "./Theme.js"

const MAX_PANEL_LINES = 12

/** The panel region: each panel under a title line, side by side when the terminal is wide enough. */
export class PanelRegion implements Component {
  private readonly panels = new Map<string, PluginPanel>()
  private cache: { width: number; lines: ReadonlyArray<string> } | undefined

  constructor(private readonly theme: Theme) {}

  set(panel: PluginPanel): void {
    const key = `${panel.pluginId}\u0000${panel.id}`
    if (panel.lines.length === 0) this.panels.delete(key)
    else this.panels.set(key, panel)
    this.invalidate()
  }

  get size(): number {
    return this.panels.size
  }

  invalidate(): void {
    this.cache = undefined
  }

  render(width: number): ReadonlyArray<string> {
    if (this.cache?.width === width) return this.cache.lines
    const t = this.theme
    const blocks = [...this.panels.values()].map((panel) => [
      t.dim(`${t.glyphs.rule} ${sanitize(panel.id)} (${sanitize(panel.pluginId)})`),
      ...panel.lines.slice(0, MAX_PANEL_LINES).map((line) => sanitize(line).replace(/\n/g, " "))
    ])
    let lines: Array<string> = []
    const columns = blocks.length > 1 && width >= 100 ? Math.min(blocks.length, Math.floor(width / 50)) : 1
    if (columns > 1) {
      const columnWidth = Math.floor((width - (columns - 1) * 2) / columns)
      for (let start = 0; start < blocks.length; start += columns) {
        const row = blocks.slice(start, start + columns)
        const height = Math.max(...row.map((block) => block.length))
        for (let i = 0; i < height; i++) {
          lines.push(
            row
              .map((block) => {
                const cell = truncateToWidth(block[i] ?? "", columnWidth, "…")
                return cell + " ".repeat(Math.max(0, columnWidth - visibleLength(cell)))
              })
              .join("  ")
              .trimEnd()
          )
        }
      }
    } else {
      lines = blocks.flat().map((line) => truncateToWidth(line, width, "…"))
    }
    this.cache = { width, lines }
    return lines
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR sequences are what is measured around
const visibleLength = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "").length

/** Where plugin output goes once the screen is up; what comes before is kept and handed over then. */
export class PluginSink {
  private early: Array<(sink: PluginSinkTarget) => void> = []
  private target: PluginSinkTarget | undefined

  attach(target: PluginSinkTarget): void {
    this.target = target
    for (const deliver of this.early) deliver(target)
    this.early = []
  }

  deliver(deliver: (sink: PluginSinkTarget) => void): void {
    if (this.target === undefined) this.early.push(deliver)
    else deliver(this.target)
  }
}

export interface PluginSinkTarget {
  readonly notice: (text: string, level: "info" | "warning" | "error") => void
  readonly panel: (panel: PluginPanel) => void
}

/** The PluginUi of the interactive UI. */
export const pluginUiLayer = (sink: PluginSink): Layer.Layer<PluginUi> =>
  Layer.sync(PluginUi, () => {
    const notifications: Array<PluginNotification> = []
    const panels = new Map<string, PluginPanel>()
    return PluginUi.of({
      notify: (notification) =>
        Effect.sync(() => {
          notifications.push(notification)
          sink.deliver((target) =>
            target.notice(
              `[${notification.pluginId}] ${notification.message}`,
              notification.level === "info" ? "info" : notification.level
            )
          )
        }),
      panel: (panel) =>
        Effect.sync(() => {
          panels.set(`${panel.pluginId}\u0000${panel.id}`, panel)
          sink.deliver((target) => target.panel(panel))
        }),
      // A command's crash is not among them: the command's own error says it (Commands.runCommand).
      diagnostic: (diagnostic) =>
        Effect.sync(() => {
          if (diagnostic.stage === "command") return
          sink.deliver((target) => target.notice(`warning: ${formatDiagnostic(diagnostic)}`, "warning"))
        }),
      notifications: Effect.sync(() => [...notifications]),
      panels: Effect.sync(() => [...panels.values()])
    })
  })
