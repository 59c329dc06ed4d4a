// The `yaml` package, loaded on first use: a run without a configuration file, skill or prompt
// template never evaluates it (about a tenth of what a run loads; see bench/README.md).
import { createRequire } from "node:module"
import type * as Yaml from "yaml"

let loaded: typeof Yaml | undefined

export const yaml = (): typeof Yaml => {
  loaded ??= createRequire(import.meta.url)("yaml") as typeof Yaml
  return loaded
}
