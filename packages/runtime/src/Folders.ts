// `mkdir -p` that always ends. Node's `mkdir(…, { recursive: true })` loops forever where a
// parent exists but a child cannot be made and mkdir says ENOENT (under /proc or /sys:
// `ALISIO_HOME=/proc/x`, or a model writing `/proc/x/y.txt`), in the thread pool or, for the
// sync form, on the main thread, where not even SIGTERM ends it. These make each missing folder
// once, from the deepest existing one down, and fail with the first error that repeats.
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code

/** Creates `folder` and its missing parents (each with `mode`); an existing folder is fine. */
export const makeFolders = async (folder: string, mode?: number): Promise<void> => {
  const options = mode === undefined ? {} : { mode }
  try {
    await fsp.mkdir(folder, options)
    return
  } catch (error) {
    if (codeOf(error) === "EEXIST") {
      if ((await fsp.stat(folder).catch(() => undefined))?.isDirectory() === true) return
      throw error
    }
    const parent = path.dirname(folder)
    if (codeOf(error) !== "ENOENT" || parent === folder) throw error
    await makeFolders(parent, mode)
  }
  // The parents exist now: a second failure is the answer.
  await fsp.mkdir(folder, options).catch(async (error: unknown) => {
    if (codeOf(error) === "EEXIST" && (await fsp.stat(folder).catch(() => undefined))?.isDirectory() === true) return
    throw error
  })
}

/** `makeFolders`, synchronously. */
export const makeFoldersSync = (folder: string, mode?: number): void => {
  const options = mode === undefined ? {} : { mode }
  const isFolder = () => {
    try {
      return fs.statSync(folder).isDirectory()
    } catch {
      return false
    }
  }
  try {
    fs.mkdirSync(folder, options)
    return
  } catch (error) {
    if (codeOf(error) === "EEXIST") {
      if (isFolder()) return
      throw error
    }
    const parent = path.dirname(folder)
    if (codeOf(error) !== "ENOENT" || parent === folder) throw error
    makeFoldersSync(parent, mode)
  }
  try {
    fs.mkdirSync(folder, options)
  } catch (error) {
    if (codeOf(error) !== "EEXIST" || !isFolder()) throw error
  }
}
