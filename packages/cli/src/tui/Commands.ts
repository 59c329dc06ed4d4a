// Slash commands typed in the editor (CMD-2): core commands run through the catalog and their text
// joins the conversation; surface commands (help, exit, copy, settings…) are the UI's own; /resume
// without an id opens a session picker.
import type { CommandListing, CommandOutput } from "@alisio/domain/Command"
import type { SessionId } from "@alisio/domain/Ids"
import type { CommandCatalog } from "@alisio/runtime/CommandCatalog"
import type { Providers, ResolvedModel } from "@alisio/runtime/Providers"
import { SessionStore, type SessionStoreService } from "@alisio/runtime/SessionStore"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Setup } from "../App.js"
import { shortId } from "../ShortIds.js"
import type { ConversationState, Intent } from "./Conversation.js"
import { PickerDialog } from "./Dialogs.js"
import type { RunView } from "./RunView.js"
import type { Screen } from "./Screen.js"

export interface CommandContext {
  readonly name: string
  readonly args: string
  readonly catalog: CommandCatalog["Type"]
  readonly store: SessionStoreService
  readonly screen: Screen
  readonly view: RunView
  readonly state: ConversationState
  readonly setup: Setup
  readonly offer: (intent: Intent) => void
  readonly send: (prompt: string) => void
  readonly resolveModel: Effect.Effect<{ readonly model: ResolvedModel }, unknown>
  /** The runtime's services: the provider registry a /connect adds to. */
  readonly services: Context.Context<Providers>
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string"
    ? (error as { message: string }).message
    : String(error)

export const KEYS = [
  ["Enter", "send (while a run streams: queue it for when it ends)"],
  ["Shift+Enter, \\ then Enter", "a new line"],
  ["↑ / ↓", "earlier messages"],
  ["/", "commands"],
  ["@", "complete a file name"],
  ["Esc, Ctrl-C", "cancel the running turn"],
  ["Ctrl-O", "expand or collapse tool output and reasoning"],
  ["Ctrl-C twice, Ctrl-D", "leave"]
] as const

const helpText = (listings: ReadonlyArray<CommandListing>): string => {
  const rows = listings
    .filter((listing) => listing.shadowedBy === undefined)
    .map((listing) => [
      `/${listing.name}${listing.argumentHint === undefined ? "" : ` ${listing.argumentHint}`}`,
      listing.description
    ])
  const width = Math.min(28, Math.max(...rows.map(([label]) => label!.length), ...KEYS.map(([key]) => key.length)))
  const line = ([label, text]: ReadonlyArray<string>) => `${label!.padEnd(width)}  ${text}`
  return ["Commands:", ...rows.map(line), "", "Keys:", ...KEYS.map(line)].join("\n")
}

/** Copies text to the clipboard through the terminal (OSC 52), which works over ssh and in tmux. */
const copyToClipboard = (screen: Screen, text: string) =>
  screen.tui.terminal.write(`\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`)

const show = (screen: Screen, output: CommandOutput, ctx: CommandContext) => {
  switch (output._tag) {
    case "Text":
      if (output.text.trim() !== "") screen.notice(output.text, "command")
      return
    case "Prompt":
      ctx.send(output.prompt)
      return
    case "Switch":
      ctx.offer({
        _tag: "Switch",
        sessionId: output.sessionId as SessionId | undefined,
        note: output.text
      })
      return
  }
}

/** /resume without an id: the sessions of this workspace, newest first, to pick from. */
const pickSession = (ctx: CommandContext) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const sessions = yield* ctx.store.sessionSummaries({ cwd: ctx.setup.cwd, parentId: null, limit: 30 })
    if (sessions.length === 0) {
      ctx.screen.notice(`No sessions in ${ctx.setup.cwd} yet.`, "command")
      return
    }
    const picked = yield* Effect.async<number | undefined>((resume) => {
      const dialog = new PickerDialog(
        ctx.screen.theme,
        "Resume a session",
        sessions.map((session) => ({
          label: `${shortId(session.id)}  ${(session.title ?? session.firstPrompt ?? "(untitled)").replace(/\s+/g, " ")}`,
          detail: `${ago(now - session.updatedAt)} · ${session.runCount} run${session.runCount === 1 ? "" : "s"}${session.id === ctx.state.sessionId ? " · current" : ""}`
        })),
        (index) => {
          ctx.screen.closeDialog(dialog)
          resume(Effect.succeed(index))
        }
      )
      ctx.screen.showDialog(dialog)
      return Effect.sync(() => ctx.screen.closeDialog(dialog))
    })
    if (picked === undefined) return
    const session = sessions[picked]!
    ctx.offer({
      _tag: "Switch",
      sessionId: session.id,
      note: `Resumed session ${shortId(session.id)}${session.title === undefined ? "" : ` "${session.title}"`}.`
    })
  })

const ago = (ms: number): string => {
  const minutes = Math.floor(ms / 60_000)
  if (minutes < 1) return "just now"
  if (minutes < 60) return `${minutes}m ago`
  const hours = Math.floor(minutes / 60)
  return hours < 48 ? `${hours}h ago` : `${Math.floor(hours / 24)}d ago`
}

/** What `/model` takes, as the catalog's command does, for "back to the usual". */
const resetWords = new Set(["default", "reset", "auto"])

/** The UI's own commands that take no arguments: words after them are refused, not dropped unseen. */
const bare = new Set(["exit", "quit", "copy", "settings", "templates"])

const surface = (ctx: CommandContext): Effect.Effect<boolean, unknown> =>
  Effect.gen(function* () {
    const { screen } = ctx
    const args = ctx.args.trim()
    if (bare.has(ctx.name) && args !== "") {
      const given = JSON.stringify(args.length > 40 ? `${args.slice(0, 40)}…` : args)
      screen.notice(`/${ctx.name} takes no arguments (${given} was given); type /${ctx.name} alone.`, "error")
      return true
    }
    switch (ctx.name) {
      case "help": {
        const listings = yield* ctx.catalog.list("tui")
        const wanted = ctx.args.trim().replace(/^\//, "").toLowerCase()
        if (wanted === "") {
          screen.notice(helpText(listings), "command")
          return true
        }
        const listing = listings.find((entry) => entry.name === wanted && entry.shadowedBy === undefined)
        if (listing === undefined) screen.notice(`No command is named /${wanted}. /help lists the commands.`, "error")
        else screen.notice(helpText([listing]).split("\n\nKeys:")[0]!, "command")
        return true
      }
      case "exit":
      case "quit":
        ctx.offer({ _tag: "Exit" })
        return true
      case "copy": {
        if (ctx.view.lastAnswer === "") screen.notice("There is no answer to copy yet.", "command")
        else {
          copyToClipboard(screen, ctx.view.lastAnswer)
          screen.notice(
            `Copied the last answer (${ctx.view.lastAnswer.length} characters) to the clipboard.`,
            "command"
          )
        }
        return true
      }
      case "settings": {
        const config = ctx.setup.config
        screen.notice(
          [
            `Model: ${screen.status.state.model ?? "(chosen at the first message)"}`,
            `Workspace: ${ctx.setup.cwd}`,
            `Read-only: ${screen.status.state.readOnly ? "yes" : "no"}`,
            `Approvals: ${JSON.stringify(config.approvals ?? { write: "ask", external: "ask" })}`,
            `Configuration: ${ctx.setup.paths.globalConfigFile} (alisio config shows every setting and its source)`
          ].join("\n"),
          "command"
        )
        return true
      }
      case "connect": {
        if (ctx.args.trim() === "") {
          screen.notice(
            "/connect <name> [<url>] adds an OpenAI-compatible provider once it lists its models: ollama, lmstudio, " +
              "llamacpp, vllm, openrouter, deepseek and openai need no address (their keys from their usual variable); " +
              `any other name needs its address. It is written to ${ctx.setup.paths.globalConfigFile}; ` +
              "`alisio connect` in a shell does the same and can ask for a key.",
            "command"
          )
          return true
        }
        const { connectFromUi } = yield* Effect.promise(() => import("../ConnectCommand.js"))
        const connected = yield* Effect.either(connectFromUi(ctx.setup, ctx.args).pipe(Effect.provide(ctx.services)))
        if (connected._tag === "Left") screen.notice(connected.left.message, "error")
        else screen.notice(connected.right, "command")
        return true
      }
      case "templates": {
        const templates = (yield* ctx.catalog.list("tui")).filter((listing) => listing.source === "template")
        screen.notice(
          templates.length === 0
            ? "No prompt templates: put Markdown files in .alisio/prompts/ or ~/.config/alisio/prompts/."
            : helpText(templates).split("\n\nKeys:")[0]!,
          "command"
        )
        return true
      }
      case "ask": {
        const question = ctx.args.trim()
        if (question === "") {
          screen.notice(
            "/ask <question> asks the model about the conversation without adding to it: no tools, nothing kept.",
            "command"
          )
          return true
        }
        const { ask } = yield* Effect.promise(() => import("@alisio/runtime/SideQuestion"))
        // The answer shows as it streams, in the place of this line.
        const shown = screen.notice("Asking the model (a side question)…", "info")
        const answer = yield* Effect.either(
          Effect.flatMap(ctx.resolveModel, ({ model }) =>
            ask({
              sessionId: ctx.state.sessionId,
              question,
              service: model.service,
              model: model.model,
              onText: (text) => screen.updateNotice(shown, text, "command")
            })
          ).pipe(Effect.provideService(SessionStore, ctx.store))
        )
        if (answer._tag === "Left") screen.updateNotice(shown, `/ask: ${messageOf(answer.left)}`, "error")
        else screen.updateNotice(shown, `${answer.right}\n(a side question: not kept in the conversation)`, "command")
        return true
      }
      case "resume":
        if (ctx.args !== "") return false
        yield* pickSession(ctx)
        return true
      case "model": {
        // Before the first message the choice is the UI's own; a name that cannot be used leaves the
        // previous choice in place, so the next message does not fail on it.
        if (ctx.state.sessionId !== undefined) return false
        const previous = ctx.state.modelFlag
        if (ctx.args !== "") ctx.state.modelFlag = resetWords.has(ctx.args) ? Option.none() : Option.some(ctx.args)
        yield* Effect.tapError(ctx.resolveModel, () =>
          Effect.sync(() => {
            ctx.state.modelFlag = previous
          })
        )
        screen.notice(
          ctx.args === ""
            ? `No session yet; the new session will run with ${screen.status.state.model} (/model <provider/model> chooses another).`
            : `The new session will run with ${screen.status.state.model}.`,
          "command"
        )
        return true
      }
      default:
        return false
    }
  })

/** Runs `/name args` as the UI does: its own commands first, then the catalog's. */
export const runCommand = (ctx: CommandContext): Effect.Effect<void> =>
  Effect.gen(function* () {
    const listing = yield* Effect.either(ctx.catalog.resolve(ctx.name, "tui"))
    const surfaceFirst =
      listing._tag === "Left" || listing.right.execution === "surface" || ctx.name === "resume" || ctx.name === "model"
    if (surfaceFirst && (yield* surface(ctx))) return
    if (listing._tag === "Left") {
      const hint = listing.left.reason === "unknown" ? " /help lists the commands." : ""
      ctx.screen.notice(`${listing.left.message}${hint}`, "error")
      return
    }
    const output = yield* ctx.catalog.execute(ctx.name, ctx.args, {
      sessionId: ctx.state.sessionId,
      cwd: ctx.setup.cwd,
      surface: "tui"
    })
    show(ctx.screen, output, ctx)
  }).pipe(
    Effect.catchAll((error) =>
      Effect.sync(() =>
        ctx.screen.notice(
          typeof error === "object" && error !== null && "message" in error
            ? String((error as { readonly message: unknown }).message)
            : String(error),
          "error"
        )
      )
    )
  )
