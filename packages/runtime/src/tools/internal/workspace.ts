import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ToolError } from "@alisio/domain/Errors"
import type { ToolContext } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import { errnoCode } from "../../internal/errno.js"

/** A path a tool may use: inside the workspace, or outside with the person's approval. */
export interface ResolvedPath {
  /** Absolute, lexically resolved against the workspace. */
  readonly absolute: string
  /**
   * Where the operating system acts: every symlink followed (a dangling one to the path it names),
   * the part that does not exist yet joined to its nearest existing parent. Tools use this path,
   * the one that was checked.
   */
  readonly real: string
  /** How results name it: relative to the workspace when inside, else absolute. */
  readonly display: string
  readonly inside: boolean
}

/**
 * Resolves a tool's path argument against `context.cwd` (TL-3, TL-5). The boundary is checked on
 * real paths, the workspace's own included (it may be reached through a symlink): a path leading
 * outside, by `..`, an absolute path or a symlink anywhere on the way, needs `approveExternalPath`
 * for its real path first.
 */
export const resolvePath = (context: ToolContext, input: string): Effect.Effect<ResolvedPath, ToolError> =>
  Effect.gen(function* () {
    if (input.includes("\0")) {
      return yield* new ToolError({
        message: `${JSON.stringify(input)} holds a NUL character (\\u0000), which no file path can contain`
      })
    }
    const local = input.startsWith("file://") ? yield* fromFileUrl(input) : input
    const expanded =
      local === "~" ? os.homedir() : local.startsWith("~/") ? path.join(os.homedir(), local.slice(2)) : local
    const absolute = path.resolve(context.cwd, expanded)
    const lexicallyInside = isWithin(path.resolve(context.cwd), absolute)
    const display = lexicallyInside ? path.relative(context.cwd, absolute) || "." : absolute
    const workspace = yield* realPath(path.resolve(context.cwd), ".")
    const real = yield* realPath(absolute, display)
    const inside = isWithin(workspace, real)
    // The real path, not the one the model wrote: a link inside the workspace that leads out is
    // lexically inside, and the approval must name where the access really goes.
    if (!inside) yield* context.approveExternalPath(real)
    return { absolute, real, display, inside }
  })

/** A `file://` URL a model wrote for a path, as that path; one naming another host is refused. */
const fromFileUrl = (input: string): Effect.Effect<string, ToolError> =>
  Effect.try({
    try: () => fileURLToPath(input),
    catch: () =>
      new ToolError({ message: `${JSON.stringify(input)} is a URL no local path matches; give a file path instead` })
  })

/**
 * Why a path that does not exist may be a slip, with its remedy: what a model sends by mistake
 * (a newline or a space at an end, Windows separators) is invisible or misleading in a plain message.
 */
const missingPath = (display: string): string => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(display)) {
    return `${JSON.stringify(display)} does not exist: the path holds a control character (a newline, a tab); leave it out`
  }
  if (display !== display.trim()) {
    return `${JSON.stringify(display)} does not exist: the path starts or ends with a space; leave it out`
  }
  if (display.includes("\\")) {
    return `${display} does not exist; folders are separated by /, as in ${display.replaceAll("\\", "/")}`
  }
  return `${display} does not exist`
}

/**
 * Why a file about to be created is likely a slip, as for a missing path: on this system a `\\`
 * or a newline in the part of the path that does not exist yet makes a strange name, not a folder
 * or nothing. A name that really needs one is made with bash.
 */
export const newNameSlip = (absolute: string, display: string): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    let existing = path.dirname(absolute)
    while (existing !== path.dirname(existing) && !(await exists(existing))) existing = path.dirname(existing)
    const created = path.relative(existing, absolute)
    if (path.sep === "/" && created.includes("\\")) {
      return `${display} would be created with "\\" in its name; folders are separated by /, as in ${display.replaceAll("\\", "/")}`
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(created) || created.split(path.sep).some((name) => name !== name.trim())) {
      return `${JSON.stringify(display)} would be created with a control character or a space at an end of a name; leave it out`
    }
    return undefined
  })

const exists = (file: string) =>
  fs.lstat(file).then(
    () => true,
    () => false
  )

/**
 * A path as a listing shows it: quoted as JSON when it holds a control character, so a name with a
 * newline reads as one entry, not as two the model would look for in vain, and can be passed back.
 */
export const listed = (display: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u001f\u007f]/.test(display) ? JSON.stringify(display) : display

/** How a path below a resolved root is shown, in the style of the root's `display`. */
export const displayBelow = (root: ResolvedPath, relative: string): string =>
  relative === "" ? root.display : root.display === "." ? relative : path.join(root.display, relative)

const isWithin = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)

/** The kernel's limit on links followed while resolving one path (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40

/**
 * The real path of an absolute path (see `ResolvedPath.real`); a link loop fails. `fs.realpath`
 * answers when the whole path exists; otherwise the path is walked a component at a time, so a
 * dangling link resolves to what it names and a new file to its nearest existing parent.
 */
export const realPath = (absolute: string, display: string): Effect.Effect<string, ToolError> =>
  tryFs(display, async () => {
    try {
      return await fs.realpath(absolute)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== "ENOENT" && code !== "ENOTDIR" && code !== "ELOOP") throw error
    }
    return resolveStepwise(absolute)
  })

const resolveStepwise = async (absolute: string): Promise<string> => {
  const root = path.parse(absolute).root
  let resolved = root
  let pending = absolute.slice(root.length).split(path.sep)
  let links = 0
  while (pending.length > 0) {
    const [name, ...rest] = pending as [string, ...Array<string>]
    pending = rest
    if (name === "" || name === ".") continue
    if (name === "..") {
      resolved = path.dirname(resolved)
      continue
    }
    const next = path.join(resolved, name)
    const stat = await fs.lstat(next).catch(() => undefined)
    // Nothing there (or nothing we may look at): no link can lead elsewhere from here.
    if (stat === undefined) return path.join(next, ...pending)
    if (stat.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw Object.assign(new Error("too many levels of symbolic links"), { code: "ELOOP" })
      const target = await fs.readlink(next)
      if (path.isAbsolute(target)) resolved = path.parse(target).root
      pending = [...target.split(path.sep), ...pending]
      continue
    }
    resolved = next
  }
  return resolved
}

/** Turns a Node file-system failure into a message the model can act on. */
export const fsError =
  (display: string) =>
  (error: unknown): ToolError => {
    const code = errnoCode(error)
    const message =
      code === "ENOENT"
        ? missingPath(display)
        : code === "EACCES" || code === "EPERM"
          ? `permission denied: ${display}`
          : code === "EISDIR"
            ? `${display} is a directory`
            : code === "ENOTDIR" || (code === "EEXIST" && (error as { readonly syscall?: string }).syscall === "mkdir")
              ? `${display}: a part of the path is not a directory`
              : code === "ENOSPC"
                ? `no space left on the device writing ${display}`
                : code === "ELOOP"
                  ? `${display}: too many levels of symbolic links (a link loop)`
                  : code === "ENAMETOOLONG"
                    ? `${shortened(display)}: a name in this path is too long (file systems allow 255 bytes ` +
                      "a name and 4096 a path); use shorter names"
                    : code === "EAGAIN" || code === "EWOULDBLOCK"
                      ? `${display} has nothing to read now: it is a stream that waits for data, not a file; ` +
                        `read a little of it with bash and a timeout (timeout 2 head -n 50 ${display})`
                      : `${display}: ${error instanceof Error ? error.message : String(error)}`
    return new ToolError({ message })
  }

/** A path too long to repeat whole: its start and its end. */
const shortened = (display: string): string =>
  display.length <= 200 ? display : `${display.slice(0, 120)}…${display.slice(-60)}`

/** Runs a Node file-system call, failing with a readable `ToolError` about `display`. */
export const tryFs = <A>(display: string, run: () => Promise<A>): Effect.Effect<A, ToolError> =>
  Effect.tryPromise({ try: run, catch: fsError(display) })
