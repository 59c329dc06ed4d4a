// Opens a database file with the bare driver, as an outside tool would, to check it.
import { loadSqliteDriver } from "../../packages/runtime/src/internal/sqliteDriver.js"

interface Bare {
  pragma(source: string, options: { simple: true }): unknown
  close(): void
}
// The runtime's loader: on Node 22+ it keeps the native objects alive (see sqliteDriver.ts).
const Sqlite = loadSqliteDriver() as new (filename: string, options?: { readonly readonly?: boolean }) => Bare

/** `PRAGMA integrity_check` of the file: "ok" when it is sound. */
export const integrityCheck = async (filename: string): Promise<string> => {
  const db = new Sqlite(filename)
  try {
    return String(db.pragma("integrity_check", { simple: true }))
  } finally {
    db.close()
  }
}
