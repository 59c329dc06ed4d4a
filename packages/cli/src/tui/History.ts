// What the person typed, kept per workspace under the state folder (↑/↓ in the editor): one JSON
// string a line, the folder 0700 and the file 0600 like the rest of the state (ST-6).
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeFoldersSync } from "@alisio/runtime/Folders"

const KEEP = 1_000

/** The history file of a workspace: named after a hash of its path, so nothing of the path leaks into names. */
export const historyFile = (stateHome: string, cwd: string): string =>
  path.join(stateHome, "history", `${createHash("sha256").update(cwd).digest("hex").slice(0, 24)}.jsonl`)

export interface History {
  /** Oldest first. */
  readonly entries: ReadonlyArray<string>
  readonly add: (entry: string) => void
}

const privateFolder = (folder: string) => {
  makeFoldersSync(folder, 0o700)
  fs.chmodSync(folder, 0o700)
}

/** Reads the history (a missing or unreadable file is an empty one) and appends to it from then on. */
export const openHistory = (file: string): History => {
  let entries: Array<string> = []
  try {
    entries = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .flatMap((line) => {
        if (line === "") return []
        try {
          const value = JSON.parse(line) as unknown
          return typeof value === "string" ? [value] : []
        } catch {
          return []
        }
      })
  } catch {
    entries = []
  }
  if (entries.length > KEEP * 1.2) {
    entries = entries.slice(-KEEP)
    try {
      privateFolder(path.dirname(file))
      const temp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(temp, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""), { mode: 0o600 })
      fs.renameSync(temp, file)
    } catch {
      // A history that cannot be trimmed still works; it is trimmed next time.
    }
  }
  return {
    entries,
    add: (entry) => {
      if (entry.trim() === "" || entries.at(-1) === entry) return
      entries.push(entry)
      try {
        privateFolder(path.dirname(file))
        fs.appendFileSync(file, `${JSON.stringify(entry)}\n`, { mode: 0o600 })
        fs.chmodSync(file, 0o600)
      } catch {
        // History is a convenience: a full or read-only disk must not stop the conversation.
      }
    }
  }
}
