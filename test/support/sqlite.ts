// Opens a database file with the bare driver, as an outside tool would, to check it.
import { createRequire } from "node:module"

interface Bare {
  pragma(source: string, options: { simple: true }): unknown
  close(): void
}
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (
  filename: string,
  options?: { readonly readonly?: boolean }
) => Bare

/** `PRAGMA integrity_check` of the file: "ok" when it is sound. */
export const integrityCheck = async (filename: string): Promise<string> => {
  const db = new Sqlite(filename)
  try {
    return String(db.pragma("integrity_check", { simple: true }))
  } finally {
    db.close()
  }
}
