// Whether a command may load an external plugin, decided before anything else loads (bin.ts): the
// CLI is bundled twice, and only the build that shares its modules with plugins can load them
// (runtime/src/internal/plugins/hostModules.ts says why). Errs on the side of that build: a false
// "yes" costs a little start-up time, a false "no" would leave an external plugin unloaded.
// Node built-ins only: this runs on every start.
import * as fs from "node:fs"
import * as path from "node:path"
import { alisioHomeOf, userHome } from "@alisio/runtime/PathLayout"

const listsPlugins = (file: string): boolean => {
  try {
    // A link to a pipe or device would block or never end.
    if (fs.statSync(file, { throwIfNoEntry: false })?.isFile() !== true) return false
    return /^plugins\s*:/m.test(fs.readFileSync(file, "utf8"))
  } catch {
    return false
  }
}

const hasEntries = (dir: string): boolean => {
  try {
    return fs.readdirSync(dir).some((name) => !name.startsWith("."))
  } catch {
    return false
  }
}

/** `ALISIO_HOME`, else `$XDG_CONFIG_HOME/alisio` (absolute only), else `~/.config/alisio` (as Paths.ts). */
const configHome = (env: NodeJS.ProcessEnv): string => {
  const home = alisioHomeOf(env.ALISIO_HOME, userHome())
  if (home !== undefined) return home
  const xdg = env.XDG_CONFIG_HOME
  return path.join(xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(userHome(), ".config"), "alisio")
}

const flagValue = (args: ReadonlyArray<string>, name: string): string | undefined => {
  const index = args.indexOf(name)
  if (index >= 0) return args[index + 1]
  return args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1)
}

/** True when the command could import an external plugin (PL-1 sources, PL-3 trust and read-only). */
export const mayLoadExternalPlugins = (
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd()
): boolean => {
  if (args.includes("--help") || args.includes("-h")) return false
  const [command, subcommand] = args.filter((arg) => !arg.startsWith("-"))
  if (command === "sessions" || command === "uninstall" || command === "connect") return false
  // `install` loads what it installed, to say what it adds.
  if (command === "install") return true
  if (command === "plugins") return subcommand !== "remove"
  if (args.some((arg) => arg === "--plugin" || arg.startsWith("--plugin="))) return true
  if (args.includes("--read-only")) return false
  const config = configHome(env)
  if (hasEntries(path.join(config, "plugins")) || listsPlugins(path.join(config, "config.yaml"))) return true
  if (!args.includes("--trust-project")) return false
  const project = path.resolve(cwd, flagValue(args, "--cwd") ?? ".")
  return (
    hasEntries(path.join(project, ".alisio", "plugins")) || listsPlugins(path.join(project, ".alisio", "config.yaml"))
  )
}
