// EX-1…EX-3: the registry of extension providers and the start-up screen they draw.
import type {
  ExtensionPoint,
  ExtensionPoints,
  MascotProvider,
  StartupScreenProvider,
  TerminalCapabilities
} from "@alisio/domain/Extensions"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { DEFAULT_HINT, defaultMascot, defaultScreen, paint, type StyledLine } from "./internal/startupScreen.js"
import { fitWidth, sanitizeLines } from "./internal/terminalText.js"

/** The points the registry knows, in the order `winners` lists them. */
export const EXTENSION_POINTS: ReadonlyArray<ExtensionPoint> = ["mascot", "startup-screen"]

/**
 * A problem with extensions, for the host to print or list: two plugins tied at the winning
 * priority (EX-2), a registration the registry ignored, or a provider that failed while drawing.
 */
export const ExtensionDiagnostic = Schema.Struct({
  kind: Schema.Literal("extension_conflict", "extension_invalid", "extension_failed"),
  point: Schema.String,
  pluginIds: Schema.Array(Schema.String),
  message: Schema.String
})
export type ExtensionDiagnostic = typeof ExtensionDiagnostic.Type

/** The provider that serves a point. */
export interface ResolvedExtension<P extends ExtensionPoint> {
  readonly pluginId: string
  readonly priority: number
  readonly provider: ExtensionPoints[P]
}

/** Who serves a point, for `alisio plugins list`: `pluginId` is undefined when the default does. */
export interface ExtensionWinner {
  readonly point: ExtensionPoint
  readonly pluginId: string | undefined
  readonly priority: number | undefined
  /** How many registrations compete for the point. */
  readonly candidates: number
}

/** The start-up screen as drawn, and who drew it ("default" or a plugin id). */
export interface StartupRender {
  readonly lines: ReadonlyArray<string>
  readonly mascot: string
  readonly screen: string
  /** Providers that failed, timed out or returned something unusable during this render. */
  readonly diagnostics: ReadonlyArray<ExtensionDiagnostic>
}

export interface ExtensionsService {
  /** Adds a provider; an unknown point, a non-finite priority or a provider without `render` is ignored with an `extension_invalid` diagnostic. */
  readonly register: <P extends ExtensionPoint>(
    pluginId: string,
    point: P,
    provider: ExtensionPoints[P],
    priority?: number | undefined
  ) => Effect.Effect<void>
  /** Removes everything a plugin registered (the host calls it when the plugin's scope closes). */
  readonly unregister: (pluginId: string) => Effect.Effect<void>
  /** The winner: highest priority, then plugin id (code-point order), then registration order (EX-2). */
  readonly resolve: <P extends ExtensionPoint>(point: P) => Effect.Effect<Option.Option<ResolvedExtension<P>>>
  readonly winners: Effect.Effect<ReadonlyArray<ExtensionWinner>>
  /** Conflicts at the winning priority and ignored registrations, as of now. */
  readonly diagnostics: Effect.Effect<ReadonlyArray<ExtensionDiagnostic>>
  /** Draws the mascot and the start-up screen for `terminal`, falling back to the defaults (EX-3). */
  readonly renderStartup: (terminal: TerminalCapabilities) => Effect.Effect<StartupRender>
}

export class Extensions extends Context.Tag("@alisio/runtime/Extensions")<Extensions, ExtensionsService>() {}

export interface ExtensionsOptions {
  /** Shown by the default start-up screen. */
  readonly version?: string | undefined
  /** The default screen's hint lines. */
  readonly hint?: ReadonlyArray<string> | undefined
  /** How long a provider may take to draw; default 250 ms. */
  readonly renderTimeout?: Duration.DurationInput | undefined
}

interface Entry {
  readonly pluginId: string
  readonly point: ExtensionPoint
  readonly priority: number
  readonly provider: unknown
  readonly seq: number
}

interface State {
  readonly entries: ReadonlyArray<Entry>
  readonly invalid: ReadonlyArray<ExtensionDiagnostic>
  readonly seq: number
}

const byPrecedence = (a: Entry, b: Entry): number =>
  b.priority - a.priority || (a.pluginId < b.pluginId ? -1 : a.pluginId > b.pluginId ? 1 : 0) || a.seq - b.seq

const ranked = (entries: ReadonlyArray<Entry>, point: ExtensionPoint): ReadonlyArray<Entry> =>
  entries.filter((entry) => entry.point === point).sort(byPrecedence)

const conflictOf = (point: ExtensionPoint, ordered: ReadonlyArray<Entry>): ExtensionDiagnostic | undefined => {
  const top = ordered[0]
  if (top === undefined) return undefined
  const tied = [...new Set(ordered.filter((entry) => entry.priority === top.priority).map((entry) => entry.pluginId))]
  if (tied.length < 2) return undefined
  return {
    kind: "extension_conflict",
    point,
    pluginIds: tied,
    message: `Plugins ${tied.join(", ")} all provide "${point}" at priority ${top.priority}; ${top.pluginId} wins by plugin id. Give one of them a higher priority to choose.`
  }
}

const isPoint = (point: unknown): point is ExtensionPoint =>
  typeof point === "string" && (EXTENSION_POINTS as ReadonlyArray<string>).includes(point)

const hasRender = (provider: unknown): boolean =>
  typeof provider === "object" &&
  provider !== null &&
  typeof (provider as { readonly render?: unknown }).render === "function"

const TIMED_OUT: unique symbol = Symbol("timed out")

// Plugin output beyond this is not even looked at: the screen is at most a terminal high.
const MAX_RAW_LINE = 16_384

/** What a provider returned, as plain lines for `terminal`, or why it is unusable. */
const acceptLines = (output: unknown, terminal: TerminalCapabilities): Either.Either<ReadonlyArray<string>, string> => {
  if (!Array.isArray(output)) return Either.left("it returned something other than an array of strings")
  const lines: Array<string> = []
  for (const item of output as ReadonlyArray<unknown>) {
    if (typeof item !== "string") return Either.left("it returned something other than an array of strings")
    if (lines.length < terminal.rows) lines.push(...sanitizeLines(item.slice(0, MAX_RAW_LINE)))
  }
  return Either.right(lines.slice(0, Math.max(0, terminal.rows)).map((line) => fitWidth(line, terminal.columns)))
}

export const make = (options: ExtensionsOptions = {}): Effect.Effect<ExtensionsService> =>
  Effect.gen(function* () {
    const state = yield* Ref.make<State>({ entries: [], invalid: [], seq: 0 })
    const renderTimeout = Duration.decode(options.renderTimeout ?? Duration.millis(250))

    const register: ExtensionsService["register"] = (pluginId, point, provider, priority) =>
      Ref.update(state, (current): State => {
        const rank = priority ?? 0
        const problem = !isPoint(point)
          ? `unknown extension point ${JSON.stringify(point)} (known: ${EXTENSION_POINTS.join(", ")})`
          : typeof rank !== "number" || !Number.isFinite(rank)
            ? `priority must be a finite number, got ${String(rank)}`
            : !hasRender(provider)
              ? "the provider has no render function"
              : undefined
        if (problem !== undefined) {
          const diagnostic: ExtensionDiagnostic = {
            kind: "extension_invalid",
            point: String(point),
            pluginIds: [pluginId],
            message: `Plugin ${pluginId}: ignored an extension for "${String(point)}": ${problem}.`
          }
          return { ...current, invalid: [...current.invalid, diagnostic] }
        }
        const entry: Entry = { pluginId, point, priority: rank, provider, seq: current.seq }
        return { ...current, entries: [...current.entries, entry], seq: current.seq + 1 }
      })

    const unregister = (pluginId: string) =>
      Ref.update(
        state,
        (current): State => ({
          ...current,
          entries: current.entries.filter((entry) => entry.pluginId !== pluginId),
          invalid: current.invalid.filter((diagnostic) => !diagnostic.pluginIds.includes(pluginId))
        })
      )

    const resolve = <P extends ExtensionPoint>(point: P) =>
      Effect.map(Ref.get(state), (current) =>
        Option.map(
          Option.fromNullable(ranked(current.entries, point)[0]),
          (entry): ResolvedExtension<P> => ({
            pluginId: entry.pluginId,
            priority: entry.priority,
            provider: entry.provider as ExtensionPoints[P]
          })
        )
      )

    const winners = Effect.map(Ref.get(state), (current) =>
      EXTENSION_POINTS.map((point): ExtensionWinner => {
        const ordered = ranked(current.entries, point)
        return {
          point,
          pluginId: ordered[0]?.pluginId,
          priority: ordered[0]?.priority,
          candidates: ordered.length
        }
      })
    )

    const diagnostics = Effect.map(Ref.get(state), (current) => [
      ...EXTENSION_POINTS.flatMap((point) => conflictOf(point, ranked(current.entries, point)) ?? []),
      ...current.invalid
    ])

    /** Runs one provider under the time bound; its lines, or the diagnostic saying why not. */
    const draw = (
      pluginId: string,
      point: ExtensionPoint,
      terminal: TerminalCapabilities,
      call: () => unknown
    ): Effect.Effect<Either.Either<ReadonlyArray<string>, ExtensionDiagnostic>> => {
      const failed = (why: string): ExtensionDiagnostic => ({
        kind: "extension_failed",
        point,
        pluginIds: [pluginId],
        message: `Plugin ${pluginId}: the "${point}" provider ${why}; the default is shown instead.`
      })
      return Effect.suspend(() => {
        const result = call()
        return Effect.isEffect(result) ? (result as Effect.Effect<unknown, unknown>) : Effect.die("not an Effect")
      }).pipe(
        // Disconnected: a provider that ignores interruption must not hold the screen either.
        Effect.disconnect,
        Effect.timeoutFail({ duration: renderTimeout, onTimeout: () => TIMED_OUT }),
        Effect.exit,
        Effect.map((exit) => {
          if (exit._tag === "Success") {
            return Either.mapLeft(acceptLines(exit.value, terminal), (why) => failed(why))
          }
          const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          return Either.left(
            failure === TIMED_OUT
              ? failed(`gave no answer within ${Duration.format(renderTimeout)}`)
              : exit.cause._tag === "Fail"
                ? failed("failed")
                : failed("crashed")
          )
        })
      )
    }

    const renderStartup = (terminal: TerminalCapabilities): Effect.Effect<StartupRender> =>
      Effect.gen(function* () {
        const size: TerminalCapabilities = {
          ...terminal,
          columns: Math.max(0, Math.floor(Number.isFinite(terminal.columns) ? terminal.columns : 0)),
          rows: Math.max(0, Math.floor(Number.isFinite(terminal.rows) ? terminal.rows : 0))
        }
        const problems: Array<ExtensionDiagnostic> = []
        let mascot = { lines: defaultMascot(size), ours: true, by: "default" }
        const mascotProvider = yield* resolve("mascot")
        if (Option.isSome(mascotProvider)) {
          const { pluginId, provider } = mascotProvider.value
          const drawn = yield* draw(pluginId, "mascot", size, () => (provider as MascotProvider).render(size))
          if (Either.isRight(drawn)) mascot = { lines: drawn.right, ours: false, by: pluginId }
          else problems.push(drawn.left)
        }

        let screen: { lines: ReadonlyArray<StyledLine>; by: string } = {
          lines: defaultScreen(size, mascot, { version: options.version, hint: options.hint ?? DEFAULT_HINT }),
          by: "default"
        }
        const screenProvider = yield* resolve("startup-screen")
        if (Option.isSome(screenProvider)) {
          const { pluginId, provider } = screenProvider.value
          const drawn = yield* draw(pluginId, "startup-screen", size, () =>
            (provider as StartupScreenProvider).render(size, mascot.lines)
          )
          if (Either.isRight(drawn)) screen = { lines: drawn.right.map((text) => [{ text }]), by: pluginId }
          else problems.push(drawn.left)
        }

        return {
          lines: screen.lines.slice(0, size.rows).map((line) => paint(line, size.columns, size.color)),
          mascot: mascot.by,
          screen: screen.by,
          diagnostics: problems
        }
      })

    return Extensions.of({ register, unregister, resolve, winners, diagnostics, renderStartup })
  })

export const layer = (options: ExtensionsOptions = {}): Layer.Layer<Extensions> =>
  Layer.effect(Extensions, make(options))
