// Writes an external plugin package as an author publishes it: its own package.json with the
// `alisio-plugin` keyword and peer dependencies on effect and @alisio/domain, plain ESM (no build
// step), and its own node_modules holding its own copies of both (links to the workspace's).
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const require = createRequire(import.meta.url)
const effectPackage = realpathSync(dirname(require.resolve("effect/package.json")))
const domainPackage = fileURLToPath(new URL("../../packages/domain", import.meta.url))

/** Creates `<root>/<folder>` holding the plugin package; returns its path. */
export const writePluginPackage = (
  root: string,
  folder: string,
  options: { readonly name: string; readonly source: string; readonly files?: Readonly<Record<string, string>> }
): string => {
  const dir = join(root, folder)
  mkdirSync(join(dir, "node_modules", "@alisio"), { recursive: true })
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify(
      {
        name: options.name,
        version: "1.0.0",
        type: "module",
        keywords: ["alisio-plugin"],
        exports: { ".": "./index.js" },
        peerDependencies: { effect: "^3.22.0", "@alisio/domain": "^0.1.0" }
      },
      null,
      2
    )}\n`
  )
  writeFileSync(join(dir, "index.js"), options.source)
  for (const [file, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  symlinkSync(effectPackage, join(dir, "node_modules", "effect"))
  symlinkSync(domainPackage, join(dir, "node_modules", "@alisio", "domain"))
  return dir
}

/**
 * The weather plugin of the end-to-end tests: a Tag-based service, its own Schema.TaggedError,
 * the domain's ToolError, a scoped fiber that writes `interrupted.txt` when it is interrupted,
 * and a notification telling whether the host's PluginError is its own class.
 */
export const weatherPluginSource = `import { writeFileSync } from "node:fs"
import { ToolError } from "@alisio/domain/Errors"
import { definePlugin, PluginApi, PluginError } from "@alisio/domain/Plugin"
import { textResult } from "@alisio/domain/Tool"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

class CityNotFound extends Schema.TaggedError()("CityNotFound", { city: Schema.String, message: Schema.String }) {}

class Forecasts extends Context.Tag("weather/Forecasts")() {}

const ForecastsLive = Layer.succeed(Forecasts, {
  forecast: (city) =>
    city === "Lisbon"
      ? Effect.succeed("sunny, 24 °C")
      : Effect.fail(new CityNotFound({ city, message: "No forecast for " + city }))
})

export default definePlugin({
  id: "weather",
  version: "1.0.0",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    const refused = yield* Effect.flip(
      api.tools.register({ name: "not valid", description: "", effect: "read", parameters: {}, execute: () => Effect.never })
    )
    yield* api.ui.notify("host PluginError is mine: " + Schema.is(PluginError)(refused))
    yield* Effect.forkScoped(
      Effect.onInterrupt(Effect.never, () =>
        Effect.sync(() => writeFileSync(new URL("./interrupted.txt", import.meta.url), "interrupted"))
      )
    )
    yield* api.tools.register({
      name: "forecast",
      description: "The weather forecast of a city.",
      effect: "read",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      execute: (args) =>
        Effect.gen(function* () {
          if (args.city === "Nowhere") return yield* new ToolError({ message: "Nowhere is not a city." })
          const forecasts = yield* Forecasts
          return textResult(args.city + ": " + (yield* forecasts.forecast(args.city)))
        }).pipe(Effect.provide(ForecastsLive))
    })
  })
})
`
