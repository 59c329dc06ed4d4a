// Model lists remembered between processes (issue 17): each `alisio run` resolves its model against
// the provider's list, and asking the server for it (`GET /models`) cost every run a request. A list
// is kept per provider, base URL and key (a hash of them names the file, so no secret is written),
// in the cache folder, for an hour. Only a hit is trusted: a model missing from a remembered list
// is looked up on the server again (Providers.resolve), so an unknown-model error always rests on
// a fresh list. Reading and writing never fail a run: a missing, unreadable or stale file is no list.

import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { ModelInfo } from "@alisio/domain/LanguageModel"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { writeFileAtomic } from "./internal/atomicFile.js"
import type { RememberedModels } from "./Providers.js"

/** How long a remembered list is trusted. */
export const MAX_AGE_MS = 60 * 60 * 1000

const CacheFile = Schema.parseJson(Schema.Struct({ savedAt: Schema.Number, models: Schema.Array(ModelInfo) }))
const decode = onFirstCall(() => Schema.decodeUnknownOption(CacheFile))
const encode = onFirstCall(() => Schema.encodeSync(CacheFile))

/** The file of one provider's list: `<folder>/<hash of id, base URL and key>.json`. */
export const cacheFile = (folder: string, identity: { providerId: string; baseURL: string; apiKey: string }) =>
  path.join(
    folder,
    `${createHash("sha256").update(`${identity.providerId}\n${identity.baseURL}\n${identity.apiKey}`).digest("hex").slice(0, 24)}.json`
  )

/** A provider's remembered list in `file`. */
export const make = (file: string, maxAgeMs: number = MAX_AGE_MS): RememberedModels => ({
  read: Effect.gen(function* () {
    const text = yield* Effect.promise(() => readFile(file, "utf8").catch(() => undefined))
    if (text === undefined) return undefined
    const cached = decode(text)
    if (Option.isNone(cached)) return undefined
    const now = yield* Clock.currentTimeMillis
    const age = now - cached.value.savedAt
    return age >= 0 && age < maxAgeMs ? cached.value.models : undefined
  }),
  write: (models) =>
    Effect.flatMap(Clock.currentTimeMillis, (savedAt) =>
      Effect.ignore(writeFileAtomic(file, encode({ savedAt, models })))
    )
})
