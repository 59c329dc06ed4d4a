import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { BlobError, type StoreError } from "@alisio/domain/Errors"
import { BlobHash } from "@alisio/domain/Ids"
import { type BlobRef, ImagePart } from "@alisio/domain/Message"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { writeFileAtomic } from "./internal/atomicFile.js"
import { errnoCode, errnoReason, errorDetail } from "./internal/errno.js"
import { tighten } from "./internal/privateFiles.js"
import { SessionStore } from "./SessionStore.js"

/** Content-addressed attachment bytes under `<state home>/blobs/sha256/<aa>/<hash>` (ST-5). */
export interface BlobStoreService {
  /** Stores the bytes once per SHA-256 (atomic write, metadata row) and returns their reference. */
  readonly put: (bytes: Uint8Array, mediaType: string) => Effect.Effect<BlobRef, BlobError>
  /** The blob's bytes, verified against its hash. */
  readonly read: (ref: BlobRef) => Effect.Effect<Uint8Array, BlobError>
  /** The blob as a verified base64 image part, which is what a run receives instead of the reference. */
  readonly attachment: (ref: BlobRef) => Effect.Effect<ImagePart, BlobError>
}

export class BlobStore extends Context.Tag("@alisio/runtime/BlobStore")<BlobStore, BlobStoreService>() {}

const HASH = /^[0-9a-f]{64}$/
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/
const decodeImagePart = onFirstCall(() => Schema.decodeUnknownEither(ImagePart))

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

const fsFailure =
  (what: string, path: string, hash: string) =>
  (error: unknown): BlobError => {
    const reason = errnoReason(error)
    const message =
      reason === "disk_full"
        ? `${what}: the disk is full. Free some space and try again.`
        : reason === "read_only"
          ? `${what}: ${path} is not writable. Make the state folder writable, or use another state directory.`
          : `${what} (${errorDetail(error)}).`
    return new BlobError({ reason, message, hash, path })
  }

const fromStoreError =
  (hash: string) =>
  (error: StoreError): BlobError =>
    new BlobError({
      reason: error.reason === "disk_full" || error.reason === "read_only" ? error.reason : "io",
      message: error.message,
      hash,
      ...(error.path === undefined ? {} : { path: error.path })
    })

/** The BlobStore rooted at `stateHome`; metadata rows go to the session database. */
export const make = (stateHome: string): Effect.Effect<BlobStoreService, never, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const root = join(stateHome, "blobs", "sha256")
    // Folders an older Alisio (or a loose umask) made wider are narrowed when the store starts (ST-6).
    yield* tighten([join(stateHome, "blobs"), root])

    /** The blob's folder and file; the hash is checked before any path is built. */
    const locate = (hash: string) => {
      if (!HASH.test(hash)) {
        return Effect.fail(
          new BlobError({
            reason: "bad_hash",
            message: `"${hash.slice(0, 80)}" is not a blob hash (64 lowercase hex digits of a SHA-256).`,
            hash: hash.slice(0, 80)
          })
        )
      }
      const folder = join(root, hash.slice(0, 2))
      return Effect.succeed({ folder, file: join(folder, hash) })
    }

    const readExisting = (file: string) =>
      Effect.tryPromise({
        try: () =>
          readFile(file).then(
            (bytes): Uint8Array | undefined => bytes,
            (error: unknown) => {
              if (errnoCode(error) === "ENOENT") return undefined
              throw error
            }
          ),
        catch: (error) => error
      })

    // Written beside the final name and renamed over it: readers never see a partial blob.
    const write = (file: string, hash: string, bytes: Uint8Array) =>
      writeFileAtomic(file, bytes).pipe(
        Effect.catchTag("FileWriteError", (error) =>
          Effect.fail(fsFailure(`Cannot store blob ${hash}`, file, hash)(error.cause))
        )
      )

    const put = (bytes: Uint8Array, mediaType: string): Effect.Effect<BlobRef, BlobError> =>
      Effect.gen(function* () {
        const type = mediaType.trim().toLowerCase()
        if (!MEDIA_TYPE.test(type)) {
          return yield* new BlobError({
            reason: "bad_media_type",
            message: `"${mediaType.slice(0, 80)}" is not a media type (such as image/png).`
          })
        }
        const hash = sha256(bytes)
        const { file, folder } = yield* locate(hash)
        const existing = yield* readExisting(file).pipe(
          Effect.mapError(fsFailure(`Cannot read blob ${hash}`, file, hash))
        )
        // Same hash, same bytes: keep the file (made private if it was not). A file that no longer
        // matches its name is replaced.
        if (existing === undefined || sha256(existing) !== hash) yield* write(file, hash, bytes)
        else yield* tighten([folder, file])
        const createdAt = yield* Clock.currentTimeMillis
        yield* store.blobs
          .record({ hash: BlobHash.make(hash), size: bytes.byteLength, mediaType: type, createdAt })
          .pipe(Effect.mapError(fromStoreError(hash)))
        return { _tag: "blob", hash: BlobHash.make(hash), mediaType: type }
      })

    const read = (ref: BlobRef): Effect.Effect<Uint8Array, BlobError> =>
      Effect.gen(function* () {
        const hash: string = ref.hash
        const { file } = yield* locate(hash)
        const bytes = yield* readExisting(file).pipe(Effect.mapError(fsFailure(`Cannot read blob ${hash}`, file, hash)))
        if (bytes === undefined) {
          return yield* new BlobError({
            reason: "not_found",
            message: `Blob ${hash} is missing from ${file}. Attach the file again.`,
            hash,
            path: file
          })
        }
        if (sha256(bytes) !== hash) {
          return yield* new BlobError({
            reason: "altered",
            message: `Blob ${hash} in ${file} was altered since it was stored (its bytes no longer match the hash). Attach the file again.`,
            hash,
            path: file
          })
        }
        return bytes
      })

    const attachment = (ref: BlobRef): Effect.Effect<ImagePart, BlobError> =>
      Effect.gen(function* () {
        const mediaType = ref.mediaType.trim().toLowerCase()
        if (!mediaType.startsWith("image/")) {
          return yield* new BlobError({
            reason: "bad_media_type",
            message: `Blob ${ref.hash} is ${mediaType}; only images can be attached to a run.`,
            hash: ref.hash
          })
        }
        const bytes = yield* read(ref)
        const part = decodeImagePart({ _tag: "image", mediaType, data: Buffer.from(bytes).toString("base64") })
        if (part._tag === "Left") {
          return yield* new BlobError({
            reason: "bad_media_type",
            message: `"${mediaType.slice(0, 80)}" is not an image media type a run accepts.`,
            hash: ref.hash
          })
        }
        return part.right
      })

    return BlobStore.of({ put, read, attachment })
  })

/** The BlobStore under `stateHome`; needs the SessionStore for the `blobs` rows. */
export const layer = (stateHome: string): Layer.Layer<BlobStore, never, SessionStore> =>
  Layer.effect(BlobStore, make(stateHome))
