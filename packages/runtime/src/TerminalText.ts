// Text that the model, a tool, a plugin or a server wrote reaches a terminal only through here. An
// escape sequence in it could set the clipboard (OSC 52), retitle the window, move the cursor to
// hide or rewrite what is on the screen, or ask the terminal to answer into the input; so
// sequences and control characters are removed. Colours of our own are added afterwards.

/**
 * CSI (7- and 8-bit); OSC, DCS, SOS, PM and APC up to their terminator, so their payload never
 * shows, but no further than the end of their line: one left open is broken there, and the lines
 * after it show (none of these carries a newline in its payload); then any other ESC sequence.
 */
export const ESCAPE_SEQUENCES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
  /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\n]*?(?:\u0007|\u001b\\|\u009c|(?=\n)|$)|\u001b[ -/]*[0-~]/g

/**
 * C0 and C1 controls but tab, newline and carriage return; DEL; and the invisible characters that
 * reorder or break lines (bidi controls, line and paragraph separators).
 */
export const CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g

// biome-ignore lint/suspicious/noControlCharactersInRegex: what needs cleaning at all
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/

/**
 * `text` without escape sequences and control characters. Tabs and newlines stay; carriage
 * returns stay when `keepCarriageReturns` (a command's progress bar redraws its line), otherwise
 * only before a newline. Text with nothing to remove is returned as it is, cheaply: this runs on
 * every streamed delta.
 */
export const terminalSafe = (text: string, keepCarriageReturns = false): string => {
  if (!UNSAFE.test(text)) return text
  const stripped = text.replace(ESCAPE_SEQUENCES, "").replace(CONTROLS, "")
  return keepCarriageReturns ? stripped : stripped.replace(/\r(?!\n)/g, "")
}

const QUOTED_MAX = 200

/**
 * `text` as a JSON string, every control and invisible character shown as its escape (`\n`,
 * `\u001b`, `\u2028`), so text a person or a file gave stays one visible line where it is echoed;
 * cut after 200 characters.
 */
export const quoted = (text: string): string => {
  const shown = text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}…` : text
  return JSON.stringify(shown).replace(CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
}
