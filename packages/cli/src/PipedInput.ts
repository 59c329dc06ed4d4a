// What is piped under a prompt given as arguments (`git diff | alisio run "Review this change"`):
// sent with the prompt, as Claude Code and Codex do. A program may leave its child's stdin open
// and write nothing; rather than wait for ever, a run waits `PIPE_GRACE` for the first byte.
import { fstatSync } from "node:fs"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CliError, usageError } from "./CliError.js"

/** How long an open pipe may stay silent before the run goes on without it. */
export const PIPE_GRACE = Duration.seconds(3)

/** More than any model's context: such input belongs in a file the model reads with its tools. */
export const MAX_PIPED_BYTES = 4 * 1024 * 1024

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

const readAll = (stdin: NodeJS.ReadStream): Effect.Effect<string, CliError> =>
  Effect.tryPromise({
    try: async () => {
      const chunks: Array<Buffer> = []
      let bytes = 0
      for await (const chunk of stdin) {
        bytes += (chunk as Buffer).length
        if (bytes > MAX_PIPED_BYTES) throw new Error("too large")
        chunks.push(chunk as Buffer)
      }
      return Buffer.concat(chunks).toString("utf8")
    },
    catch: () => {
      stdin.destroy()
      return usageError(
        `stdin holds more than ${MAX_PIPED_BYTES / 1024 / 1024} MB, more than a model can read at once: ` +
          "write it to a file and name the file in the prompt"
      )
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
