import * as Cause from "effect/Cause"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

const textOf = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts
    .map((part) =>
      part instanceof Error || (typeof part === "object" && part !== null && "message" in part)
        ? String((part as { readonly message: unknown }).message)
        : typeof part === "string"
          ? part
          : JSON.stringify(part)
    )
    .join(" ")
}

/** One `alisio: <level>: …` line on stderr per log entry, the cause's first line appended. */
export const stderrLogger = Logger.make<unknown, void>(({ cause, logLevel, message }) => {
  const reason = Cause.isEmpty(cause) ? "" : ` (${Cause.pretty(cause).split("\n")[0]})`
  process.stderr.write(`alisio: ${logLevel._tag.toLowerCase()}: ${textOf(message)}${reason}\n`)
})

/**
 * Effect's default logger writes to stdout, which belongs to the answer and to `--json` events:
 * the CLI logs on stderr instead, warnings and worse only.
 */
export const layer = Layer.merge(
  Logger.replace(Logger.defaultLogger, stderrLogger),
  Logger.minimumLogLevel(LogLevel.Warning)
)
