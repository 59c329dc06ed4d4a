// What `alisio plugins install` and `plugins remove` were given, checked before npm sees it: a
// path (a package folder or a tarball from `npm pack`) or a package of the registry. Whatever the
// person typed or a package.json says reaches npm, the terminal and config.yaml only once it is a
// valid package name (no `../`, no escape sequence).
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { type CliError, usageError } from "./CliError.js"

export const isPathSpec = (spec: string): boolean =>
  spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("~") || path.isAbsolute(spec)

export const expandHome = (spec: string): string =>
  spec.startsWith("~") ? path.join(process.env.HOME ?? "", spec.slice(1)) : spec

/** What npm accepts as a package's name: `name` or `@scope/name`, lower case and URL-friendly. */
export const isPackageName = (name: string): boolean =>
  name.length <= 214 && /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(name)

/** `name`, `@scope/name` from `name@1.2`, `@scope/name@^2`. */
export const packageNameOf = (spec: string): string => {
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0)
  return at > 0 ? spec.slice(0, at) : spec
}

/** Text as a message shows it: quoted, so a control character or an escape sequence is only its escape. */
export const quoted = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}…` : text)

/** A name or path as a message shows it: as typed when it is plain, else quoted. */
export const shown = (text: string): string => (/^[A-Za-z0-9@._~/:+-]+$/.test(text) ? text : quoted(text))

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const TARBALL = /\.(tgz|tar\.gz|tar)$/i

export type InstallSpec =
  | { readonly _tag: "folder"; readonly path: string; readonly name: string }
  | { readonly _tag: "tarball"; readonly path: string }
  | { readonly _tag: "package"; readonly spec: string }

const readPackageJson = (file: string): { readonly json: unknown } | { readonly problem: string } => {
  try {
    return { json: JSON.parse(fs.readFileSync(file, "utf8")) }
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) }
  }
}

/** The name a package folder's package.json gives it, when it is a valid one. */
export const folderPackageName = (folder: string): string | undefined => {
  const read = readPackageJson(path.join(folder, "package.json"))
  const name = "json" in read ? (read.json as { readonly name?: unknown } | null)?.name : undefined
  return typeof name === "string" && isPackageName(name) ? name : undefined
}

/** `npm:<package>`, a bare package (npm reads the rest), or a path; `pluginsFolder` for the remedy. */
export const parseInstallSpec = (typed: string, pluginsFolder: string): Effect.Effect<InstallSpec, CliError> =>
  Effect.gen(function* () {
    const spec = typed.trim()
    if (spec === "" || spec === "npm:") {
      return yield* usageError("Name a package (npm:<package>) or the folder of a plugin to install.")
    }
    if (CONTROL.test(spec)) {
      return yield* usageError(`${quoted(spec)} holds control characters; name a package (npm:<package>) or a folder.`)
    }
    if (spec.startsWith("npm:")) {
      const rest = spec.slice(4)
      if (!isPackageName(packageNameOf(rest))) {
        return yield* usageError(
          `${quoted(packageNameOf(rest))} is not an npm package name (lower-case letters, digits, - . _ ~, an optional @scope/); to install a folder, give its path without npm:.`
        )
      }
      return { _tag: "package", spec: rest }
    }
    if (!isPathSpec(spec)) return { _tag: "package", spec }
    const target = path.resolve(expandHome(spec))
    const stat = fs.statSync(target, { throwIfNoEntry: false })
    if (stat === undefined) return yield* usageError(`${target} does not exist.`)
    if (!stat.isDirectory()) {
      if (stat.isFile() && TARBALL.test(target)) return { _tag: "tarball", path: target }
      return yield* usageError(
        `${target} is a file, not a plugin: give the folder of a plugin package, or a tarball that \`npm pack\` made (.tgz).`
      )
    }
    const manifest = path.join(target, "package.json")
    if (!fs.existsSync(manifest)) {
      return yield* usageError(
        `${target} has no package.json: a plugin installed with npm is a package (a plain folder plugin can be copied into ${pluginsFolder} instead).`
      )
    }
    const read = readPackageJson(manifest)
    if ("problem" in read) {
      return yield* usageError(`${manifest} is not valid JSON (${read.problem}); fix it, then install again.`)
    }
    const name = (read.json as { readonly name?: unknown } | null)?.name
    if (typeof name !== "string" || !isPackageName(name)) {
      return yield* usageError(
        `${manifest} gives the package ${typeof name === "string" ? `the name ${quoted(name)}, which is not a valid package name` : "no name"}; give it one such as "alisio-plugin-<what it does>".`
      )
    }
    return { _tag: "folder", path: target, name }
  })
