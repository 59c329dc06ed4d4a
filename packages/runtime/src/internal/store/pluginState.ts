// Plugin state (ST-1): a JSON value per plugin and key.

import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SessionStoreService } from "../../SessionStore.js"
import { errorDetail } from "../errno.js"
import { storeError } from "../sessionDatabase.js"
import * as Rows from "../sessionRows.js"
import { onFirstCall, type Sql } from "./sql.js"

const PluginKey = Schema.Struct({ plugin_id: Schema.String, key: Schema.String })

const queries = ({ reading, run, writing }: Sql) =>
  onFirstCall({
    get: () =>
      reading(
        "A plugin state value",
        SqlSchema.findOne({
          Request: PluginKey,
          Result: Rows.PluginValueRow,
          execute: (r) => run("SELECT value FROM plugin_state WHERE plugin_id = ? AND key = ?", [r.plugin_id, r.key])
        })
      ),
    set: () =>
      writing(
        SqlSchema.void({
          Request: Schema.Struct({ ...PluginKey.fields, json: Schema.String, now: Schema.Number }),
          execute: (r) =>
            run(
              `INSERT INTO plugin_state (plugin_id, key, value, updated_at) VALUES (?, ?, ?, ?)
          ON CONFLICT (plugin_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
              [r.plugin_id, r.key, r.json, r.now]
            )
        })
      ),
    remove: () =>
      writing(
        SqlSchema.void({
          Request: PluginKey,
          execute: (r) => run("DELETE FROM plugin_state WHERE plugin_id = ? AND key = ?", [r.plugin_id, r.key])
        })
      )
  })

export const makePluginState = (sql: Sql): SessionStoreService["pluginState"] => {
  const { db } = sql
  const q = queries(sql)
  return {
    get: (pluginId, key) =>
      Effect.map(
        db.use(q.get({ plugin_id: pluginId, key })),
        Option.map((row) => row.value)
      ),
    set: (pluginId, key, value) =>
      Effect.gen(function* () {
        const json = yield* Effect.try({
          try: () => JSON.stringify(value) as string | undefined,
          catch: (error) =>
            storeError(
              db.filename,
              "io",
              `Plugin ${pluginId}'s state "${key}" cannot be stored as JSON (${errorDetail(error)}).`
            )
        })
        const now = yield* Clock.currentTimeMillis
        // A value with no JSON form (undefined) removes the key.
        yield* db.use(
          json === undefined ? q.remove({ plugin_id: pluginId, key }) : q.set({ plugin_id: pluginId, key, json, now })
        )
      })
  }
}
