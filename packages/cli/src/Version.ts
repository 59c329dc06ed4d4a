import { createRequire } from "node:module"

// Set by the bundler; from sources or tsc output the package manifest is one folder up.
declare const ALISIO_VERSION: string | undefined

/** The version of the `alisio` package. */
export const version: string =
  typeof ALISIO_VERSION === "string"
    ? ALISIO_VERSION
    : (createRequire(import.meta.url)("../package.json") as { version: string }).version
