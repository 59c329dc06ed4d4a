import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { PluginDiagnostic } from "./PluginHost.js"
import { terminalSafe } from "./TerminalText.js"

/** A message a plugin sent with `api.ui.notify`. */
export interface PluginNotification {
  readonly pluginId: string
  readonly message: string
  readonly level: "info" | "warning" | "error"
}

/** A panel a plugin keeps up to date with `api.ui.panel` (CH-4: the TUI renders them). */
export interface PluginPanel {
  readonly pluginId: string
  readonly id: string
  readonly lines: ReadonlyArray<string>
}

/**
 * The surface plugins talk to: notifications, panels and the host's diagnostics about them. A
 * headless run prints notifications and diagnostics on stderr; the TUI (a later issue) renders
 * them; tests record them.
 */
export class PluginUi extends Context.Tag("@alisio/runtime/PluginUi")<
  PluginUi,
  {
    readonly notify: (notification: PluginNotification) => Effect.Effect<void>
    readonly panel: (panel: PluginPanel) => Effect.Effect<void>
    readonly diagnostic: (diagnostic: PluginDiagnostic) => Effect.Effect<void>
    readonly notifications: Effect.Effect<ReadonlyArray<PluginNotification>>
    /** The latest lines of every panel, by plugin and panel id. */
    readonly panels: Effect.Effect<ReadonlyArray<PluginPanel>>
  }
>() {}

/** Plugin text made safe for one terminal line: no escape sequences or control characters. */
export const oneSafeLine = (text: string, max = 500): string => {
  const flat = terminalSafe(text).replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const make = (
  print: ((line: string) => void) | undefined,
  said: (diagnostic: PluginDiagnostic) => boolean = () => false
): Effect.Effect<PluginUi["Type"]> =>
  Effect.gen(function* () {
    const notifications = yield* Ref.make<ReadonlyArray<PluginNotification>>([])
    const panels = yield* Ref.make<ReadonlyMap<string, PluginPanel>>(new Map())
    return PluginUi.of({
      notify: (notification) =>
        Effect.zipRight(
          Ref.update(notifications, (all) => [...all, notification]),
          Effect.sync(() => print?.(formatNotification(notification)))
        ),
      panel: (panel) => Ref.update(panels, (all) => new Map(all).set(`${panel.pluginId}\u0000${panel.id}`, panel)),
      diagnostic: (diagnostic) =>
        Effect.sync(() => {
          if (!said(diagnostic)) print?.(`alisio: warning: ${oneSafeLine(formatDiagnostic(diagnostic), 1_000)}`)
        }),
      notifications: Ref.get(notifications),
      panels: Effect.map(Ref.get(panels), (all) => [...all.values()])
    })
  })

/** `alisio: warning: [<id>] <message>`, the one stderr line a notification prints as. */
export const formatNotification = (notification: PluginNotification): string => {
  const level = notification.level === "info" ? "" : `${notification.level}: `
  return `alisio: ${level}[${oneSafeLine(notification.pluginId, 64)}] ${oneSafeLine(notification.message)}`
}

/** `plugin <id>: <message>`, the one line a diagnostic prints as. */
export const formatDiagnostic = (diagnostic: PluginDiagnostic): string =>
  `plugin ${diagnostic.pluginId}: ${diagnostic.message}`

/**
 * A headless run: notifications and diagnostics as one stderr line each; panels are kept for a later
 * TUI. A command's failure is not among them: the command's own error says it.
 */
export const layerHeadless: Layer.Layer<PluginUi> = Layer.effect(
  PluginUi,
  make(
    (line) => process.stderr.write(`${line}\n`),
    (diagnostic) => diagnostic.stage === "command"
  )
)

/** Records notifications and panels and prints nothing. */
export const makeMemory: Effect.Effect<PluginUi["Type"]> = make(undefined)

/** Records notifications and panels and prints nothing (tests, `plugins list`). */
export const layerMemory: Layer.Layer<PluginUi> = Layer.effect(PluginUi, makeMemory)
