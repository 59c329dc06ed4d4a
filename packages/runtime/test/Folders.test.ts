// `mkdir -p` that always ends (ST-6 state folders, TL-6 tools): Node's recursive mkdir spins for
// ever under /proc, where a parent exists and mkdir still says ENOENT.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { makeFolders, makeFoldersSync } from "@alisio/runtime/Folders"
import { afterEach, assert, describe, it } from "@effect/vitest"

const codeOf = (run: () => unknown): Promise<string | undefined> =>
  Promise.resolve()
    .then(run)
    .then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error.code
    )

describe("Folders", () => {
  const roots: Array<string> = []
  const root = () => {
    const made = mkdtempSync(path.join(tmpdir(), "alisio-folders-"))
    roots.push(made)
    return made
  }
  afterEach(() => {
    for (const made of roots.splice(0)) rmSync(made, { recursive: true, force: true })
  })

  it("ST-6 makes every missing folder with the mode, and an existing folder is fine", async () => {
    const base = root()
    const deep = path.join(base, "a", "b", "c")
    await makeFolders(deep, 0o700)
    assert.strictEqual(statSync(path.join(base, "a")).mode & 0o777, 0o700)
    assert.strictEqual(statSync(deep).mode & 0o777, 0o700)
    await makeFolders(deep, 0o700)
    const other = path.join(base, "x", "y")
    makeFoldersSync(other, 0o700)
    makeFoldersSync(other, 0o700)
    assert.isTrue(statSync(other).isDirectory())
  })

  it("ST-6 a file in the way is an error, as with mkdir -p", async () => {
    const base = root()
    writeFileSync(path.join(base, "file"), "x")
    assert.strictEqual(await codeOf(() => makeFolders(path.join(base, "file"))), "EEXIST")
    assert.strictEqual(await codeOf(() => makeFolders(path.join(base, "file", "sub"))), "ENOTDIR")
    assert.strictEqual(await codeOf(() => makeFoldersSync(path.join(base, "file"))), "EEXIST")
    assert.strictEqual(await codeOf(() => makeFoldersSync(path.join(base, "file", "sub"))), "ENOTDIR")
  })

  it.skipIf(!existsSync("/proc/self"))(
    "ST-6 a folder under /proc fails at once (Node's own recursive mkdir spins)",
    async () => {
      assert.strictEqual(await codeOf(() => makeFolders("/proc/alisio-no-such/state")), "ENOENT")
      assert.strictEqual(await codeOf(() => makeFoldersSync("/proc/alisio-no-such/state")), "ENOENT")
    }
  )
})
