// Text from the model, tools and plugins reaches the screen only through here: escape sequences
// (CSI, OSC, DCS…) and control characters could move the cursor, retitle the terminal or hide
// text, so they are removed; tabs become spaces and carriage returns keep only what they left.

// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what this removes
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]P_^X][\s\S]*?(?:\x07|\x1b\\|$)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g

/** Text safe to lay out: no escape sequences, no control characters but newlines. */
export const sanitize = (text: string): string =>
  text
    .replace(ESCAPES, "")
    .replace(/\t/g, "    ")
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => {
      const cr = line.lastIndexOf("\r", line.length - 2)
      return (cr === -1 ? line : line.slice(cr + 1)).replace(CONTROLS, "")
    })
    .join("\n")
