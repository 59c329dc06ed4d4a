// Node built-ins only: bin.ts reads it on every start (CodeCache.ts).

import * as path from "node:path"
import { alisioHomeOf, userHome } from "@alisio/runtime/PathLayout"

/**
 * The cache folder: `$ALISIO_HOME/cache`, else `$XDG_CACHE_HOME/alisio` (absolute values only),
 * else `~/.cache/alisio`.
 */
export const cacheHome = (env: NodeJS.ProcessEnv = process.env): string => {
  const alisioHome = alisioHomeOf(env.ALISIO_HOME, userHome())
  if (alisioHome !== undefined) return path.join(alisioHome, "cache")
  const xdg = env.XDG_CACHE_HOME?.trim()
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(userHome(), ".cache"), "alisio")
}
