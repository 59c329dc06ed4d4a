// Node 24 as .ci/node24.sh installs it (with better-sqlite3 built for it), when it is there.
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const ci = (path: string) => fileURLToPath(new URL(`../.ci/${path}`, import.meta.url))

export interface Node24 {
  readonly version: string
  readonly path: string
  /** What a process that opens SQLite needs on this Node: the preload that finds its binding. */
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
}

export const node24 = (): Node24 | undefined => {
  const path = ci("node24/node_modules/node/bin/node")
  const binding = ci("node24/sqlite/node_modules/better-sqlite3/build/Release/better_sqlite3.node")
  if (!existsSync(path) || !existsSync(binding)) return undefined
  const manifest = ci("node24/node_modules/node/package.json")
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string }
  return { version, path, args: ["--require", ci("node24-sqlite.cjs")], env: {} }
}
