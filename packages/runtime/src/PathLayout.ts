import * as os from "node:os"
import * as path from "node:path"

// Where the files go, as pure functions of the environment: kept apart from the `Paths` service so
// that `alisio --help`, which names these files, can say where they are without loading Effect.

/** Where Alisio keeps its files. */
export interface AlisioPaths {
  /** Configuration: `config.yaml`, global plugins. */
  readonly configHome: string
  /** State: the session database, blobs, plugin storage. */
  readonly stateHome: string
  /** `<configHome>/config.yaml`. */
  readonly globalConfigFile: string
}

/** The environment the paths depend on. */
export interface PathsEnvironment {
  readonly ALISIO_HOME?: string | undefined
  readonly XDG_CONFIG_HOME?: string | undefined
  readonly XDG_STATE_HOME?: string | undefined
  /** The user's home folder. */
  readonly home: string
}

/**
 * The folder `ALISIO_HOME` names, or undefined when it is unset or blank. Spaces around it are
 * dropped and a leading `~` is the user's home, as a shell would have made it: a value quoted in a
 * service file, `.env` or Dockerfile (`ALISIO_HOME="~/alisio"`) made a folder named `~` in
 * whatever folder Alisio started in. The CLI refuses another relative value (`relativeAlisioHome`);
 * an embedder's is taken from the current folder.
 */
export const alisioHomeOf = (value: string | undefined, home: string): string | undefined => {
  const given = value?.trim() ?? ""
  if (given === "") return undefined
  if (given === "~") return home
  if (given.startsWith("~/")) return path.join(home, given.slice(2))
  return path.resolve(given)
}

/**
 * Why `ALISIO_HOME` cannot be used, when it is a relative path (`.alisio`, `alisio-home`): it would
 * put the configuration and the sessions in another place in every folder Alisio starts in (and in
 * every folder a command it runs starts in), so earlier sessions would seem lost. `undefined` when
 * it is absolute, starts with `~`, or is unset.
 */
export const relativeAlisioHome = (value: string | undefined): string | undefined => {
  const given = value?.trim() ?? ""
  if (given === "" || given === "~" || given.startsWith("~/") || path.isAbsolute(given)) return undefined
  return (
    `ALISIO_HOME is a relative path (${JSON.stringify(given)}): it would put the configuration and the sessions ` +
    `in a different place in every folder; set it to an absolute path, e.g. ALISIO_HOME="$PWD/${given.replace(/^\.\//, "")}"`
  )
}

/**
 * `ALISIO_HOME` puts both under one folder (config in it, state in its `state/`); otherwise the
 * XDG folders, `~/.config/alisio` and `~/.local/state/alisio` by default. Relative XDG values are
 * ignored, as the XDG specification says.
 */
export const resolve = (env: PathsEnvironment): AlisioPaths => {
  const nonEmpty = (value: string | undefined) => (value === undefined || value === "" ? undefined : value)
  const root = alisioHomeOf(env.ALISIO_HOME, env.home)
  if (root !== undefined) {
    return { configHome: root, stateHome: path.join(root, "state"), globalConfigFile: path.join(root, "config.yaml") }
  }
  const xdg = (value: string | undefined, fallback: string) => {
    const given = nonEmpty(value)
    return given !== undefined && path.isAbsolute(given) ? given : path.join(env.home, fallback)
  }
  const configHome = path.join(xdg(env.XDG_CONFIG_HOME, ".config"), "alisio")
  const stateHome = path.join(xdg(env.XDG_STATE_HOME, path.join(".local", "state")), "alisio")
  return { configHome, stateHome, globalConfigFile: path.join(configHome, "config.yaml") }
}

/** The session database of a state home. */
export const databaseFile = (stateHome: string): string => path.join(stateHome, "alisio.db")

/**
 * The user's home folder: `$HOME`, unless it is empty or relative (`HOME= alisio …` in a service or
 * a container), which would put the state in whatever folder Alisio starts in; then the account's
 * own home, and the file system's root when the account has none.
 */
export const userHome = (): string => {
  const home = os.homedir()
  if (path.isAbsolute(home)) return home
  try {
    const own = os.userInfo().homedir
    if (path.isAbsolute(own)) return own
  } catch {
    // No account entry (an arbitrary uid in a container): nothing better is known.
  }
  return path.parse(process.cwd()).root
}
