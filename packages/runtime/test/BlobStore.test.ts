import { createHash } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { stat } from "node:fs/promises"
import { join } from "node:path"
import { BlobError } from "@alisio/domain/Errors"
import type { BlobHash } from "@alisio/domain/Ids"
import type { BlobRef } from "@alisio/domain/Message"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as BlobStore from "../src/BlobStore.js"
import * as SessionStore from "../src/SessionStore.js"
import { tempDir } from "./fixtures/storeTesting.js"

/** A BlobStore under a fresh state home, with the in-memory session database for its rows. */
const withBlobs = <A, E>(
  body: (
    blobs: BlobStore.BlobStoreService,
    stateHome: string,
    store: SessionStore.SessionStoreService
  ) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const stateHome = yield* tempDir
    return yield* Effect.gen(function* () {
      return yield* body(yield* BlobStore.BlobStore, stateHome, yield* SessionStore.SessionStore)
    }).pipe(Effect.provide(BlobStore.layer(stateHome).pipe(Layer.provideMerge(SessionStore.layerMemory))))
  })

const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex")
const hashOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const mode = (path: string) => statSync(path).mode & 0o777

describe("BlobStore", () => {
  it.scoped("ST-5 put keeps the bytes at blobs/sha256/<aa>/<hash>, folders 0700, files 0600, with a metadata row", () =>
    withBlobs((blobs, stateHome, store) =>
      Effect.gen(function* () {
        const ref = yield* blobs.put(png, "image/PNG")
        const hash = hashOf(png)
        assert.deepStrictEqual(ref, { _tag: "blob", hash: hash as BlobHash, mediaType: "image/png" })

        const file = join(stateHome, "blobs", "sha256", hash.slice(0, 2), hash)
        assert.deepStrictEqual(readFileSync(file), png)
        assert.strictEqual(mode(file), 0o600)
        for (const folder of ["blobs", "blobs/sha256", `blobs/sha256/${hash.slice(0, 2)}`]) {
          assert.strictEqual(mode(join(stateHome, folder)), 0o700, folder)
        }
        const meta = Option.getOrThrow(yield* store.blobs.get(ref.hash))
        assert.strictEqual(meta.size, png.byteLength)
        assert.strictEqual(meta.mediaType, "image/png")
      })
    )
  )

  it.scoped("ST-6 blob folders and files an older Alisio left readable by others are narrowed to 0700 and 0600", () =>
    Effect.gen(function* () {
      const stateHome = yield* tempDir
      const hash = hashOf(png)
      const folders = ["blobs", "blobs/sha256", `blobs/sha256/${hash.slice(0, 2)}`].map((f) => join(stateHome, f))
      mkdirSync(folders[2]!, { recursive: true })
      for (const folder of folders) chmodSync(folder, 0o755)
      const file = join(folders[2]!, hash)
      writeFileSync(file, png)
      chmodSync(file, 0o644)
      yield* Effect.gen(function* () {
        const blobs = yield* BlobStore.BlobStore
        // Starting the store narrows its own folders.
        assert.deepStrictEqual(folders.slice(0, 2).map(mode), [0o700, 0o700])
        // Storing the same bytes again keeps the file, and narrows it with its folder.
        yield* blobs.put(png, "image/png")
        assert.deepStrictEqual(folders.map(mode), [0o700, 0o700, 0o700])
        assert.strictEqual(mode(file), 0o600)
        assert.deepStrictEqual(readFileSync(file), png)
      }).pipe(Effect.provide(BlobStore.layer(stateHome).pipe(Layer.provideMerge(SessionStore.layerMemory))))
    })
  )

  it.scoped("ST-5 the same bytes are stored once: same reference, same file, one row", () =>
    withBlobs((blobs, stateHome, store) =>
      Effect.gen(function* () {
        const first = yield* blobs.put(png, "image/png")
        const file = join(stateHome, "blobs", "sha256", first.hash.slice(0, 2), first.hash)
        const inode = statSync(file).ino
        const second = yield* blobs.put(Uint8Array.from(png), "image/png")
        assert.deepStrictEqual(second, first)
        assert.strictEqual(statSync(file).ino, inode, "the file was not rewritten")
        assert.deepStrictEqual(readdirSync(join(stateHome, "blobs", "sha256", first.hash.slice(0, 2))), [first.hash])
        assert.isTrue(Option.isSome(yield* store.blobs.get(first.hash)))

        const other = yield* blobs.put(Buffer.from("other bytes"), "text/plain")
        assert.notStrictEqual(other.hash, first.hash)
      })
    )
  )

  it.scoped("ST-5 writes go to a temp file renamed into place: the final name never shows a partial blob", () =>
    withBlobs((blobs, stateHome) =>
      Effect.gen(function* () {
        const big = Buffer.alloc(32 * 1024 * 1024, 7)
        const hash = hashOf(big)
        const folder = join(stateHome, "blobs", "sha256", hash.slice(0, 2))
        const file = join(folder, hash)
        const sizes = yield* Ref.make<Array<number>>([])
        const sawTemp = yield* Ref.make(false)
        // Watches the folder from the same process while the bytes are written.
        const watch = Effect.forever(
          Effect.gen(function* () {
            const entries = existsSync(folder) ? readdirSync(folder) : []
            if (entries.some((name) => name.endsWith(".tmp"))) yield* Ref.set(sawTemp, true)
            const size = yield* Effect.promise(() =>
              stat(file).then(
                (s) => s.size,
                () => -1
              )
            )
            if (size >= 0) yield* Ref.update(sizes, (all) => [...all, size])
          })
        )
        const watcher = yield* Effect.fork(watch)
        const ref = yield* blobs.put(big, "image/png")
        yield* Fiber.interrupt(watcher)

        assert.strictEqual(ref.hash, hash)
        assert.isTrue(yield* Ref.get(sawTemp), "the bytes were written under a temporary name")
        assert.isTrue(
          (yield* Ref.get(sizes)).every((size) => size === big.byteLength),
          "only the complete file ever had the final name"
        )
        assert.deepStrictEqual(readdirSync(folder), [hash], "no temporary file is left behind")
      })
    )
  )

  it.scoped("ST-5 attachment returns a verified base64 image part", () =>
    withBlobs((blobs) =>
      Effect.gen(function* () {
        const ref = yield* blobs.put(png, "image/png")
        const part = yield* blobs.attachment(ref)
        assert.deepStrictEqual(part, { _tag: "image", mediaType: "image/png", data: png.toString("base64") })
      })
    )
  )

  it.scoped("ST-5 an altered or missing blob is a typed error, not bytes", () =>
    withBlobs((blobs, stateHome) =>
      Effect.gen(function* () {
        const ref = yield* blobs.put(png, "image/png")
        const file = join(stateHome, "blobs", "sha256", ref.hash.slice(0, 2), ref.hash)
        const altered = Buffer.from(png)
        altered[10] = altered[10]! ^ 0xff
        writeFileSync(file, altered)
        const tampered = yield* Effect.flip(blobs.attachment(ref))
        assert.instanceOf(tampered, BlobError)
        assert.strictEqual(tampered.reason, "altered")
        assert.include(tampered.message, ref.hash)

        // Putting the bytes again repairs the file.
        yield* blobs.put(png, "image/png")
        assert.strictEqual((yield* blobs.attachment(ref)).data, png.toString("base64"))

        rmSync(file)
        const missing = yield* Effect.flip(blobs.attachment(ref))
        assert.strictEqual(missing.reason, "not_found")
        assert.include(missing.message, file)
      })
    )
  )

  it.scoped("ST-5 a hash that is not 64 lowercase hex digits is rejected before any path is built", () =>
    withBlobs((blobs, stateHome) =>
      Effect.gen(function* () {
        const hex = hashOf(png)
        const bad = [
          "../../../../etc/passwd",
          `${hex.slice(0, 62)}/..`,
          hex.toUpperCase(),
          hex.slice(0, 63),
          `${hex}0`,
          `${hex.slice(0, 63)}g`,
          `${hex}\n`,
          ""
        ]
        for (const hash of bad) {
          const ref = { _tag: "blob", hash: hash as BlobHash, mediaType: "image/png" } satisfies BlobRef
          const error = yield* Effect.flip(blobs.attachment(ref))
          assert.strictEqual(error.reason, "bad_hash", JSON.stringify(hash))
          assert.strictEqual((yield* Effect.flip(blobs.read(ref))).reason, "bad_hash")
        }
        assert.isFalse(existsSync(join(stateHome, "blobs")), "nothing was created or read")
      })
    )
  )

  it.scoped("ST-5 a bad media type is refused: nothing stored, and only images become attachments", () =>
    withBlobs((blobs, stateHome) =>
      Effect.gen(function* () {
        const refused = yield* Effect.flip(blobs.put(png, "not a type"))
        assert.strictEqual(refused.reason, "bad_media_type")
        assert.isFalse(existsSync(join(stateHome, "blobs")))

        const pdf = yield* blobs.put(Buffer.from("%PDF-1.7"), "application/pdf")
        const error = yield* Effect.flip(blobs.attachment(pdf))
        assert.strictEqual(error.reason, "bad_media_type")
        assert.deepStrictEqual(yield* blobs.read(pdf), Buffer.from("%PDF-1.7"))
      })
    )
  )
})
