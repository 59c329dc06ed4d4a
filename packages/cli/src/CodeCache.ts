// `alisio run` loads its code (one CommonJS file, scripts/bundle.mjs) through V8 with a code cache
// written by an earlier run on its way out. Node's own compile cache (Node 22+) keeps what V8
// compiled when a file was loaded, which is its top level; a run then compiles ~3 500 functions
// on their first call, every time. A cache made after the run holds those functions too (the
// two-turn task: ~−110 ms of CPU on Node 20 and on Node 24; bench/README.md). Node built-ins only:
// bin.ts imports it on every start. The run build has a copy too, which loads the MCP SDK's file,
// run-mcp.cjs, with a cache of its own when a server first starts (scripts/bundle.mjs).
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as vm from "node:vm"
import { makeFoldersSync } from "@alisio/runtime/Folders"
import { cacheHome } from "./CacheHome.js"
import { restoreStartFlags } from "./V8Flags.js"

/**
 * Which file: `run` (run.cjs) or `mcp` (run-mcp.cjs). Neither name starts the other: the caches of
 * one file's other builds are removed by name.
 */
export type CodeName = "run" | "mcp"

/** Where a build's code cache for this Node lives: one file per build, Node version and architecture. */
export const codeCacheFile = (name: CodeName, buildId: string, env: NodeJS.ProcessEnv = process.env): string =>
  path.join(cacheHome(env), "code", `${name}-${buildId}-${process.version}-${process.arch}.v8`)

// `import()` in the file resolves as it would in a module of the main context (Node 20.12+).
const importModuleDynamically = vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER

/** No cache rather than no run when there is no home to find the cache folder from. */
const cacheFileOrNothing = (name: CodeName, buildId: string): string | undefined => {
  try {
    return codeCacheFile(name, buildId)
  } catch {
    return undefined
  }
}

const readCache = (file: string): Buffer | undefined => {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/**
 * Writes the cache of what the script has compiled so far, then removes the caches of other builds
 * (those of other Node versions for this build stay: a user may switch between them). A cache is
 * only a saving: a folder that cannot be written costs the next run its speed, nothing else.
 */
const writeCache = (script: vm.Script, file: string, name: CodeName, buildId: string) => {
  const folder = path.dirname(file)
  const temporary = `${file}.${process.pid}`
  try {
    makeFoldersSync(folder, 0o700)
    restoreStartFlags()
    // Written whole and renamed: a run that reads it sees the old cache or the new one, never half.
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600 })
    renameSync(temporary, file)
    for (const other of readdirSync(folder)) {
      if (other.startsWith(`${name}-`) && !other.startsWith(`${name}-${buildId}-`))
        rmSync(path.join(folder, other), { force: true })
    }
  } catch {
    try {
      rmSync(temporary, { force: true })
    } catch {
      // The folder is not there to hold it either.
    }
  }
}

export interface CodeCached<A> {
  readonly exports: A
  /**
   * Writes a cache at the exit if V8 had none it would take, provided the process exits with code
   * 0: a run that failed may have stopped before most of the code ran. Called once the file's code
   * is known to run the command (not when it hands the command line to another build).
   */
  readonly keepAtExit: () => void
}

/**
 * Runs a CommonJS module (wrapped in its function by the build) as `require` would, compiled from
 * the code cache when V8 accepts it. V8 checks the cache's V8 version, flags and source length; the
 * file name holds the build's content hash, so a cache never meets another build's source.
 * `NODE_DISABLE_COMPILE_CACHE` turns it off, as it does Node's own.
 */
export const requireWithCodeCache = <A>(file: string, buildId: string, name: CodeName = "run"): CodeCached<A> => {
  const cacheFile = process.env.NODE_DISABLE_COMPILE_CACHE === undefined ? cacheFileOrNothing(name, buildId) : undefined
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile)
  // The build writes the module already wrapped, in ASCII: read as Latin-1 (copied, not decoded)
  // it is compiled as it is; decoding run.cjs's 2.6 MB (as it was) as UTF-8 cost a Node 20 run ~40 ms.
  const source = readFileSync(file, "latin1")
  const script = new vm.Script(source, { filename: file, cachedData, importModuleDynamically })
  const module = { exports: {} as A }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file))
  const needed = cachedData === undefined || script.cachedDataRejected === true
  return {
    exports: module.exports,
    keepAtExit: () => {
      if (cacheFile === undefined || !needed) return
      process.once("exit", (code) => {
        if (code === 0) writeCache(script, cacheFile, name, buildId)
      })
    }
  }
}
