// Where a plugin's child session may work (`SpawnOptions.cwd`): inside the parent's workspace, or
// inside the plugin's own folders (a git worktree under its state folder). Compared by real paths,
// so a symbolic link cannot lead a child elsewhere.
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { PluginError, type PluginPaths } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CurrentRun } from "../../CurrentRun.js"

const realPath = (target: string) =>
  Effect.promise(() => fs.realpath(target).catch(() => undefined as string | undefined))

const isInside = (root: string, target: string): boolean => {
  const rel = path.relative(root, target)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

/** Fails with a `PluginError` when `cwd` is neither below the parent's workspace nor the plugin's folders. */
export const checkChildCwd = (
  pluginId: string,
  paths: PluginPaths,
  cwd: string | undefined
): Effect.Effect<void, PluginError> =>
  Effect.gen(function* () {
    if (cwd === undefined) return
    const fail = (why: string) =>
      new PluginError({ pluginId, message: `A child session cannot work in ${cwd}: ${why}.` })
    if (!path.isAbsolute(cwd)) return yield* fail("give an absolute path")
    const target = yield* realPath(cwd)
    if (target === undefined) return yield* fail("it does not exist")
    const run = yield* Effect.serviceOption(CurrentRun)
    const roots = [...(Option.isSome(run) ? [run.value.cwd] : []), paths.state, paths.cache]
    for (const root of roots) {
      const real = yield* realPath(root)
      if (real !== undefined && isInside(real, target)) return
    }
    return yield* fail("it is neither inside the parent's workspace nor inside the plugin's own folders")
  })
