// Context windows learned from refusals, remembered between processes (CTX-1). A server that
// refuses a request as too long often names its window ("n_ctx 8192", "maximum context length is
// 32768 tokens"); a run then compacts to fit it. Each run starts afresh, so without this every
// later run (every message of the UI) sent one request too long before learning it again, and a
// local model spends seconds reading such a request. A window is kept per provider and base URL
// (a hash names the file), for an hour, since the server may be restarted with another; like the
// model lists, reading and writing never fail a run.

import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import type { LearnedWindows } from "@alisio/domain/LanguageModel"
import { onFirstCall } from "@alisio/domain/OnFirstUse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { writeFileAtomic } from "./internal/atomicFile.js"

/** How long a learned window is trusted. */
export const MAX_AGE_MS = 60 * 60 * 1000

const Learned = Schema.Struct({ tokens: Schema.Int.pipe(Schema.positive()), savedAt: Schema.Number })
const CacheFile = Schema.parseJson(Schema.Record({ key: Schema.String, value: Learned }))
const decode = onFirstCall(() => Schema.decodeUnknownOption(CacheFile))
const encode = onFirstCall(() => Schema.encodeSync(CacheFile))

/** The file of one provider's windows: `<folder>/<hash of id and base URL>.json`. */
export const cacheFile = (folder: string, identity: { providerId: string; baseURL: string }) =>
  path.join(
    folder,
    `${createHash("sha256").update(`${identity.providerId}\n${identity.baseURL}`).digest("hex").slice(0, 24)}.json`
  )

/** A provider's learned windows in `file`. */
export const make = (file: string, maxAgeMs: number = MAX_AGE_MS): LearnedWindows => {
  const readAll = Effect.map(
    Effect.promise(() => readFile(file, "utf8").catch(() => undefined)),
    (text) => (text === undefined ? {} : Option.getOrElse(decode(text), () => ({})))
  )
  return {
    read: (model) =>
      Effect.gen(function* () {
        const learned = (yield* readAll)[model]
        if (learned === undefined) return undefined
        const age = (yield* Clock.currentTimeMillis) - learned.savedAt
        return age >= 0 && age < maxAgeMs ? learned.tokens : undefined
      }),
    write: (model, tokens) =>
      Effect.gen(function* () {
        const savedAt = yield* Clock.currentTimeMillis
        const fresh = Object.entries(yield* readAll).filter(([, learned]) => savedAt - learned.savedAt < maxAgeMs)
        const next = { ...Object.fromEntries(fresh), [model]: { tokens, savedAt } }
        yield* Effect.ignore(writeFileAtomic(file, encode(next)))
      })
  }
}
