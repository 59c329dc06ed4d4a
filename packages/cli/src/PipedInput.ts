// What is piped under a prompt given as arguments (`git diff | alisio run "Review this change"`):
// sent with the prompt, as Claude Code and Codex do. A program may leave its child's stdin open
// and write nothing; rather than wait for ever, a run waits `PIPE_GRACE` for the first byte.
// Here too the limit of a prompt however it comes (arguments, stdin, `-`): `MAX_PROMPT_BYTES`.
import { fstatSync } from "node:fs"
import { binaryKind, looksBinary } from "@alisio/runtime/tools/internal/files"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CliError, usageError } from "./CliError.js"

/** How long an open pipe may stay silent before the run goes on without it. */
export const PIPE_GRACE = Duration.seconds(3)

/**
 * More than any model's context (the largest windows hold about a million tokens, some 4 MB of
 * text): a prompt beyond it, however it comes, belongs in a file the model reads with its tools.
 * Refused before anything is stored, as a session holding it could never be continued.
 */
export const MAX_PROMPT_BYTES = 4 * 1024 * 1024

const megabytes = (bytes: number) => `${Number((bytes / 1024 / 1024).toFixed(1))} MB`

/** The one-line refusal of a prompt beyond `MAX_PROMPT_BYTES`; `what` says what was too large. */
export const promptTooLarge = (what: string): CliError =>
  usageError(
    `${what}, more than a model can read at once: ` +
      "put the text in a file in the workspace and ask the model to read it"
  )

/** The prompt as it goes to the model, refused when no model could read it. */
export const checkPromptSize = (prompt: string): Effect.Effect<string, CliError> => {
  const bytes = Buffer.byteLength(prompt, "utf8")
  return bytes > MAX_PROMPT_BYTES
    ? Effect.fail(promptTooLarge(`the prompt is ${megabytes(bytes)} (at most ${megabytes(MAX_PROMPT_BYTES)})`))
    : Effect.succeed(prompt)
}

type Source = "file" | "pipe" | "none"

/** A file (`< notes.md`) is read at once; a pipe or socket after its first byte; a terminal, /dev/null or a closed fd not at all. */
const sourceOf = (stdin: NodeJS.ReadStream): Source => {
  if (stdin.isTTY === true) return "none"
  try {
    const stat = fstatSync(0)
    return stat.isFile() ? "file" : stat.isFIFO() || stat.isSocket() ? "pipe" : "none"
  } catch {
    return "none"
  }
}

/** Done when stdin has data to read or has ended, whichever comes first. */
const readableOrEnded = (stdin: NodeJS.ReadStream) =>
  Effect.async<void>((resume) => {
    const done = () => {
      cleanup()
      resume(Effect.void)
    }
    const cleanup = () => {
      stdin.off("readable", done)
      stdin.off("end", done)
      stdin.off("error", done)
    }
    stdin.once("readable", done)
    stdin.once("end", done)
    stdin.once("error", done)
    return Effect.sync(cleanup)
  })

const tooLarge = new Error("too large")

/** Bytes no model reads as text (an image, an archive, a program) are refused, naming what they look like. */
const asText = (bytes: Buffer): Effect.Effect<string, CliError> =>
  looksBinary(bytes)
    ? Effect.fail(
        usageError(
          `stdin holds ${binaryKind(bytes) ?? "binary data"}, not text: ` +
            "save it in the workspace and ask the model about the file"
        )
      )
    : Effect.succeed(bytes.toString("utf8"))

/** All of stdin, up to `MAX_PROMPT_BYTES`; more is refused without reading on. */
export const readAll = (stdin: NodeJS.ReadStream = process.stdin): Effect.Effect<string, CliError> =>
  Effect.flatMap(readBytes(stdin), asText)

const readBytes = (stdin: NodeJS.ReadStream): Effect.Effect<Buffer, CliError> =>
  Effect.tryPromise({
    try: async () => {
      const chunks: Array<Buffer> = []
      let bytes = 0
      for await (const chunk of stdin) {
        bytes += (chunk as Buffer).length
        if (bytes > MAX_PROMPT_BYTES) throw tooLarge
        chunks.push(chunk as Buffer)
      }
      return Buffer.concat(chunks)
    },
    catch: (error) => {
      stdin.destroy()
      if (error !== tooLarge) return usageError(`could not read stdin: ${String(error)}`)
      return promptTooLarge(`stdin holds more than ${megabytes(MAX_PROMPT_BYTES)}`)
    }
  })

/**
 * The text piped on stdin, when there is any, for a run whose prompt came as arguments. A pipe
 * silent for `PIPE_GRACE` is left unread, with a warning that says how to skip the wait.
 */
export const pipedInput = (stdin: NodeJS.ReadStream = process.stdin): Effect.Effect<Option.Option<string>, CliError> =>
  Effect.gen(function* () {
    const source = sourceOf(stdin)
    if (source === "none") return Option.none()
    if (source === "pipe") {
      const ready = yield* Effect.timeoutOption(readableOrEnded(stdin), PIPE_GRACE)
      if (Option.isNone(ready)) {
        stdin.destroy()
        process.stderr.write(
          `alisio: warning: nothing came on stdin within ${Duration.format(PIPE_GRACE)}; going on without it ` +
            "(run with `< /dev/null` to skip the wait)\n"
        )
        return Option.none()
      }
    }
    const text = yield* readAll(stdin)
    return text.trim() === "" ? Option.none() : Option.some(text)
  })

/** The prompt followed by what was piped, marked as such (the form Codex uses). */
export const withPipedInput = (prompt: string, piped: Option.Option<string>): string =>
  Option.isNone(piped) ? prompt : `${prompt}\n\n<stdin>\n${piped.value.replace(/\n$/, "")}\n</stdin>`
