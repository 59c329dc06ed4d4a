// Text from the model, tools and plugins reaches the screen only through here: escape sequences
// and control characters are removed (the runtime's `TerminalText` says why), tabs become spaces
// and carriage returns keep only what they left.
import { CONTROLS, ESCAPE_SEQUENCES } from "@alisio/runtime/TerminalText"

/** Text safe to lay out: no escape sequences, no control characters but newlines. */
export const sanitize = (text: string): string =>
  text
    .replace(ESCAPE_SEQUENCES, "")
    .replace(/\t/g, "    ")
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => {
      const cr = line.lastIndexOf("\r", line.length - 2)
      return (cr === -1 ? line : line.slice(cr + 1)).replace(CONTROLS, "").replace(/\r/g, "")
    })
    .join("\n")
