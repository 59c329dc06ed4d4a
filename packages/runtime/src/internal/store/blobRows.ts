// The `blobs` metadata rows of the BlobStore (ST-5); the bytes live in its folder.

import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SessionStoreService } from "../../SessionStore.js"
import * as Rows from "../sessionRows.js"
import { onFirstCall, type Sql } from "./sql.js"

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    /** Recording the same hash again keeps the first row. */
    insert: () =>
      writing(
        SqlSchema.void({
          Request: Rows.BlobRow,
          execute: (r) =>
            run(
              "INSERT INTO blobs (hash, size, media_type, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
              [r.hash, r.size, r.media_type, r.created_at]
            )
        })
      ),
    byHash: () =>
      reading(
        "A blob row",
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Rows.BlobRow,
          execute: (hash) => run("SELECT hash, size, media_type, created_at FROM blobs WHERE hash = ?", [hash])
        })
      )
  })

export const makeBlobRows = (sql: Sql): SessionStoreService["blobs"] => {
  const { db } = sql
  const q = queries(sql)
  return {
    record: (meta) =>
      db.use(q.insert({ hash: meta.hash, size: meta.size, media_type: meta.mediaType, created_at: meta.createdAt })),
    get: (hash) => Effect.map(db.use(q.byHash(hash)), Option.map(Rows.toBlobMeta))
  }
}
