import { readdir } from "node:fs/promises"
import * as path from "node:path"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { formatMode, type Tightened, tighten } from "./internal/privateFiles.js"
import { type AlisioPaths, resolve, userHome } from "./PathLayout.js"

export type { Tightened } from "./internal/privateFiles.js"

export { type AlisioPaths, databaseFile, type PathsEnvironment, resolve, userHome } from "./PathLayout.js"

export class Paths extends Context.Tag("@alisio/runtime/Paths")<Paths, AlisioPaths>() {}

/**
 * Makes the state home private (ST-6): the folder and what it holds at its top (the database
 * with its `-wal` and `-shm`, `active-model.json`, …), and the blob folders, lose any group and
 * other permission. Returns what changed, so the host can say so once; the next call finds nothing.
 */
export const tightenStateHome = (stateHome: string): Effect.Effect<ReadonlyArray<Tightened>> =>
  Effect.flatMap(
    Effect.promise(async () => {
      const entries = (folder: string) =>
        readdir(folder).then(
          (names) => names.map((name) => path.join(folder, name)),
          () => []
        )
      const blobs = path.join(stateHome, "blobs", "sha256")
      return [stateHome, ...(await entries(stateHome)), blobs, ...(await entries(blobs))]
    }),
    tighten
  )

/** One line saying what `tightenStateHome` narrowed. */
export const describeTightened = (stateHome: string, tightened: ReadonlyArray<Tightened>): string => {
  const names = tightened.map(
    (entry) => `${path.relative(stateHome, entry.path) || "."} (was ${formatMode(entry.from)})`
  )
  return `the state in ${stateHome} was readable by other users; made it private (folders 0700, files 0600): ${names.join(", ")}`
}

/** The project configuration file of a workspace. */
export const projectConfigFile = (cwd: string): string => path.join(cwd, ".alisio", "config.yaml")

const variable = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))

/** Reads the environment through Effect's `ConfigProvider` (tests can supply their own). */
export const make: Effect.Effect<AlisioPaths> = Effect.gen(function* () {
  const [ALISIO_HOME, XDG_CONFIG_HOME, XDG_STATE_HOME] = yield* Effect.all([
    variable("ALISIO_HOME"),
    variable("XDG_CONFIG_HOME"),
    variable("XDG_STATE_HOME")
  ]).pipe(Effect.orDie)
  return resolve({ ALISIO_HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, home: userHome() })
})

export const layer: Layer.Layer<Paths> = Layer.effect(Paths, make)

export const layerTest = (paths: AlisioPaths): Layer.Layer<Paths> => Layer.succeed(Paths, paths)
