import type * as Effect from "effect/Effect"

/** What the terminal can show, as detected by the CLI. */
export interface TerminalCapabilities {
  readonly columns: number
  readonly rows: number
  readonly color: boolean
  readonly unicode: boolean
}

/** Draws the mascot: plain lines, sanitized and trimmed by the host (EX-3). */
export interface MascotProvider {
  readonly render: (terminal: TerminalCapabilities) => Effect.Effect<ReadonlyArray<string>>
}

/** Draws the start-up screen around the mascot (EX-3). */
export interface StartupScreenProvider {
  readonly render: (
    terminal: TerminalCapabilities,
    mascot: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<string>>
}

/** The extension points plugins may provide for (EX-1). */
export interface ExtensionPoints {
  readonly mascot: MascotProvider
  readonly "startup-screen": StartupScreenProvider
}
export type ExtensionPoint = keyof ExtensionPoints

/** One registration for an extension point; the highest priority wins (EX-2). */
export interface ExtensionRegistration<P extends ExtensionPoint> {
  readonly point: P
  readonly priority: number
  readonly provider: ExtensionPoints[P]
}
