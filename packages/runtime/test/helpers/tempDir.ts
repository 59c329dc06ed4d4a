import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** The one temp-folder helper of the tests: a fresh folder (its real path), removed with the scope. */
export const makeTempDir = (prefix = "alisio-test-"): Effect.Effect<string, never, Scope.Scope> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix }))
  }).pipe(Effect.orDie, Effect.provide(NodeFileSystem.layer))

/** A fresh folder for one test. */
export const tempDir: Effect.Effect<string, never, Scope.Scope> = makeTempDir()
