import { styleText } from "node:util"

// The one place that decides whether the CLI may colour or animate a stream. `styleText` alone
// would not do: depending on the Node version it colours always, or judges by stdout whatever
// the stream written to, so the decision is ours and it is asked never to second-guess it.

/** Whether `stream` is a terminal the person is looking at. */
export const isTerminal = (stream: NodeJS.WriteStream): boolean => stream.isTTY === true

/** Colour only on a terminal, never with `NO_COLOR` set (https://no-color.org), nor on a dumb one. */
export const useColor = (stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean =>
  isTerminal(stream) && (env.NO_COLOR === undefined || env.NO_COLOR === "") && env.TERM !== "dumb"

/** Whether a line may be redrawn in place on `stream` (a spinner): a terminal that is not dumb. */
export const canAnimate = (stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean =>
  isTerminal(stream) && env.TERM !== "dumb"

/** The styles the CLI uses; each one the identity when colour is off. */
export interface Paint {
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly red: (text: string) => string
  readonly yellow: (text: string) => string
  readonly green: (text: string) => string
}

const style =
  (color: boolean, format: Parameters<typeof styleText>[0]) =>
  (text: string): string =>
    color && text !== "" ? styleText(format, text, { validateStream: false }) : text

/** The styles for text written to `stream`. */
export const paint = (stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): Paint => {
  const color = useColor(stream, env)
  return {
    bold: style(color, "bold"),
    dim: style(color, "dim"),
    red: style(color, "red"),
    yellow: style(color, "yellow"),
    green: style(color, "green")
  }
}

/** The width to lay text out in: the terminal's, else 80. */
export const columns = (stream: NodeJS.WriteStream): number =>
  isTerminal(stream) && typeof stream.columns === "number" && stream.columns > 0 ? stream.columns : 80
