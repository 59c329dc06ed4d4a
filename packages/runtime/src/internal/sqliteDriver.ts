// better-sqlite3, loaded once for every user (the session store through @effect/sql-sqlite-node,
// plugin storage directly), with its native objects kept alive on Node 22 and later.
//
// Why: built against Node 24.19+ headers, better-sqlite3 12's native objects (node::ObjectWrap)
// remove an environment cleanup hook in their destructor, and Node aborts the process
// (`Assertion failed: (env) != nullptr`, exit 134) when that destructor runs from a garbage
// collection outside JavaScript: at exit, or an idle-time GC. On Node 24 every run that prepared a
// statement ended so. An object that is never garbage is never finalised by the GC: at exit Node's
// own cleanup hooks delete it while the environment still exists. The cost is the memory of the
// statements a process prepares (the store caches its statements; a few dozen per run).
import { createRequire } from "node:module"
import { dirname } from "node:path"

const requireHere = createRequire(import.meta.url)
const retained = new Set<object>()
let loaded: unknown

type Constructor = new (...args: ReadonlyArray<unknown>) => object
interface Addon {
  Database: Constructor
  readonly Statement: Constructor
  [patched]?: true
}

// On the addon itself: a second copy of this module (tests re-evaluate modules) patches nothing twice.
const patched = Symbol.for("alisio.sqliteDriver.retained")

/** The very module object better-sqlite3 loads (`require` caches it by path); loading it runs its set-up. */
const loadAddon = (): Addon => {
  const root = dirname(requireHere.resolve("better-sqlite3/package.json"))
  return createRequire(`${root}/package.json`)("bindings")({
    bindings: "better_sqlite3.node",
    module_root: root
  }) as Addon
}

const retainNativeObjects = (addon: Addon): void => {
  if (addon[patched] === true) return
  addon[patched] = true
  const keep = <T>(made: T): T => {
    if (typeof made === "object" && made !== null) retained.add(made)
    return made
  }
  const wrap = (prototype: Record<string, unknown>, name: string) => {
    const original = prototype[name]
    if (typeof original !== "function") return
    prototype[name] = function (this: unknown, ...args: ReadonlyArray<unknown>) {
      return keep(original.apply(this, args))
    }
  }
  const NativeDatabase = addon.Database
  addon.Database = class extends NativeDatabase {
    constructor(...args: ReadonlyArray<unknown>) {
      super(...args)
      retained.add(this)
    }
  }
  wrap(NativeDatabase.prototype as Record<string, unknown>, "prepare")
  wrap(NativeDatabase.prototype as Record<string, unknown>, "backup")
  wrap(addon.Statement.prototype as Record<string, unknown>, "iterate")
}

/**
 * better-sqlite3's module (`Database`); on Node 22+ its native objects are kept (see above). Its
 * addon is loaded here with URI file names enabled (it reads `SQLITE_USE_URI` once, as it loads):
 * a database on a read-only folder is then read through `file:…?immutable=1` (`sessionDatabase.ts`).
 * Every other file name Alisio gives SQLite is an absolute path or `:memory:`, read as before.
 */
export const loadSqliteDriver = (): unknown => {
  if (loaded === undefined) {
    const uri = process.env.SQLITE_USE_URI
    process.env.SQLITE_USE_URI = "1"
    try {
      loaded = requireHere("better-sqlite3")
      let addon: Addon | undefined
      try {
        addon = loadAddon()
      } catch {
        // A driver laid out otherwise (a later major) loads its addon itself, and is used as it is.
      }
      if (addon !== undefined && Number(process.versions.node.split(".")[0]) >= 22) {
        try {
          retainNativeObjects(addon)
        } catch {
          // As above.
        }
      }
    } finally {
      if (uri === undefined) delete process.env.SQLITE_USE_URI
      else process.env.SQLITE_USE_URI = uri
    }
  }
  return loaded
}
