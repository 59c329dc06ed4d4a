// Marks on the way from launch to the editor, read by `pnpm bench tui`: when ALISIO_TUI_TRACE names
// a file, each mark appends a line `name milliseconds-since-the-process-started`. Nothing otherwise.
import { appendFileSync } from "node:fs"

const file = process.env.ALISIO_TUI_TRACE

export const mark = (name: string): void => {
  if (file === undefined || file === "") return
  try {
    appendFileSync(file, `${name} ${performance.now().toFixed(1)}\n`)
  } catch {
    // A trace that cannot be written changes nothing for the person at the terminal.
  }
}
