import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as YAML from "yaml"
import { loadSetup, runtimeLayer } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import type { PluginFlags } from "./Plugins.js"

const encodeReport = Schema.encodeSync(PluginHost.PluginReport)

const status = (report: PluginHost.PluginReport): string =>
  report.loaded ? "loaded" : !report.trusted ? "not trusted" : !report.enabled ? "disabled" : "failed"

/** `alisio plugins list`: every plugin the host knows of, what it registered and what went wrong. */
export const listPlugins = (flags: {
  readonly json: boolean
  readonly plugin: ReadonlyArray<string>
  readonly disablePlugin: ReadonlyArray<string>
  readonly trustProject: boolean
  readonly readOnly: boolean
}) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({ trustProject: flags.trustProject })
    const plugins: PluginFlags = {
      plugins: flags.plugin,
      disabled: flags.disablePlugin,
      readOnly: flags.readOnly,
      trustProject: flags.trustProject
    }
    const program = Effect.gen(function* () {
      const host = yield* PluginHost.PluginHost
      const reports = yield* host.plugins
      const winners = yield* host.extensions.winners
      if (flags.json) {
        const document = {
          plugins: reports.map((report) => encodeReport(report)),
          extensions: winners.map((winner) => ({
            point: winner.point,
            ...(winner.pluginId === undefined ? {} : { pluginId: winner.pluginId, priority: winner.priority })
          }))
        }
        process.stdout.write(`${JSON.stringify(document, null, 2)}\n`)
        return
      }
      const lines: Array<string> = []
      for (const report of reports) {
        const version = report.version === undefined ? "" : ` ${report.version}`
        const from = report.source === "builtin" ? "builtin" : `external, ${report.from}`
        lines.push(`${report.id}${version}  (${from})  ${status(report)}`)
        if (report.description !== undefined) lines.push(`  ${report.description}`)
        if (report.tools.length > 0) lines.push(`  tools: ${report.tools.join(", ")}`)
        if (report.commands.length > 0)
          lines.push(`  commands: ${report.commands.map((name) => `/${name}`).join(", ")}`)
        if (report.providers.length > 0) lines.push(`  providers: ${report.providers.join(", ")}`)
        for (const diagnostic of report.diagnostics) lines.push(`  ! ${diagnostic}`)
      }
      if (reports.length === 0) lines.push("No plugins.")
      lines.push(
        "",
        winners
          .map(
            (winner) => `${winner.point}: ${winner.pluginId === undefined ? "default" : `plugin ${winner.pluginId}`}`
          )
          .join(", ")
      )
      // What a plugin says of itself is text only.
      process.stdout.write(`${terminalSafe(lines.join("\n"))}\n`)
    })
    yield* program.pipe(Effect.provide(runtimeLayer(setup, { approveAll: false, plugins, quiet: true })))
  })

const isPathSpec = (spec: string): boolean =>
  spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("~") || path.isAbsolute(spec)

/** `name`, `@scope/name` from `name@1.2`, `@scope/name@^2`. */
const packageNameOf = (spec: string): string => {
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0)
  return at > 0 ? spec.slice(0, at) : spec
}

const readJson = (file: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
  } catch {
    return undefined
  }
}

const dependenciesOf = (folder: string): ReadonlyArray<string> =>
  Object.keys((readJson(path.join(folder, "package.json"))?.dependencies as Record<string, string>) ?? {})

/** Runs npm, its output on our stderr (stdout stays for results). */
const npm = (args: ReadonlyArray<string>) =>
  Effect.async<number, CliError>((resume) => {
    const child = spawn("npm", args, { stdio: ["ignore", "pipe", "pipe"], env: process.env })
    child.stdout.pipe(process.stderr, { end: false })
    child.stderr.pipe(process.stderr, { end: false })
    child.on("error", (error: NodeJS.ErrnoException) =>
      resume(
        Effect.fail(
          new CliError({
            message:
              error.code === "ENOENT"
                ? "npm was not found on PATH; `alisio plugins install` installs with npm (it comes with Node.js)."
                : `npm could not be started: ${error.message}`,
            exitCode: ExitCode.failed
          })
        )
      )
    )
    child.on("close", (code) => resume(Effect.succeed(code ?? 1)))
    return Effect.sync(() => child.kill())
  })

/** Writes `text` to `file` through a temporary file, keeping the mode of an existing file (0600 for a new one). */
const writeAtomically = (file: string, text: string) => {
  const mode = fs.existsSync(file) ? fs.statSync(file).mode & 0o777 : 0o600
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text, { mode })
  fs.renameSync(temporary, file)
}

/**
 * Adds `source` to the global `plugins` list of config.yaml, keeping the file's comments and
 * layout (the yaml Document API edits the parsed file instead of rewriting it). False when it is
 * already listed.
 */
export const recordPlugin = (file: string, source: string): Effect.Effect<boolean, CliError> =>
  Effect.try({
    try: () => {
      const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
      const doc = YAML.parseDocument(text)
      if (doc.errors.length > 0) {
        throw usageError(
          `${file} is not valid YAML (${doc.errors[0]!.message.split("\n")[0]}); fix it, then install again.`
        )
      }
      if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents
      if (!YAML.isMap(doc.contents))
        throw usageError(`${file} must be a mapping of settings to record the plugin in it.`)
      const list = doc.get("plugins", true)
      if (list === undefined || list === null || (YAML.isScalar(list) && list.value === null)) {
        doc.set("plugins", doc.createNode([source]))
      } else if (YAML.isSeq(list)) {
        const listed = list.items.some((item) => {
          const value = YAML.isNode(item) ? item.toJSON() : item
          return (
            value === source ||
            (typeof value === "object" && value !== null && (value as { source?: unknown }).source === source)
          )
        })
        if (listed) return false
        list.add(doc.createNode(source))
      } else {
        throw usageError(`plugins in ${file} is not a list; make it one, then install again.`)
      }
      writeAtomically(file, doc.toString())
      return true
    },
    catch: (error) =>
      error instanceof CliError
        ? error
        : new CliError({ message: `Could not update ${file}: ${(error as Error).message}`, exitCode: ExitCode.failed })
  })

/** `alisio plugins install <npm-spec|path>`: npm installs it into `<config>/plugins/`, config.yaml lists it. */
export const installPlugin = (flags: { readonly spec: string }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const folder = path.join(setup.paths.configHome, "plugins")
    let target = flags.spec
    if (isPathSpec(flags.spec)) {
      const expanded = flags.spec.startsWith("~") ? path.join(process.env.HOME ?? "", flags.spec.slice(1)) : flags.spec
      target = path.resolve(expanded)
      if (!fs.existsSync(path.join(target, "package.json"))) {
        return yield* usageError(
          `${target} has no package.json: a plugin installed with npm is a package (a plain folder plugin can be copied into ${folder} instead).`
        )
      }
    }
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 })
    const manifest = path.join(folder, "package.json")
    if (!fs.existsSync(manifest)) {
      fs.writeFileSync(manifest, `${JSON.stringify({ name: "alisio-plugins", private: true }, null, 2)}\n`)
    }
    const before = new Set(dependenciesOf(folder))
    // Peer dependencies (effect, @alisio/domain) are not installed: Alisio gives plugins its own.
    const code = yield* npm([
      "install",
      "--prefix",
      folder,
      "--save",
      "--legacy-peer-deps",
      "--no-audit",
      "--no-fund",
      target
    ])
    if (code !== 0) {
      return yield* new CliError({
        message: `npm could not install ${flags.spec} (exit code ${code}); its output is above.`,
        exitCode: ExitCode.failed
      })
    }
    const added = dependenciesOf(folder).filter((name) => !before.has(name))
    const fromPath = isPathSpec(flags.spec) ? readJson(path.join(target, "package.json"))?.name : undefined
    const name = added[0] ?? (typeof fromPath === "string" ? fromPath : packageNameOf(flags.spec))
    const installed = path.join(folder, "node_modules", name)
    const packageJson = readJson(path.join(installed, "package.json"))
    const keywords = Array.isArray(packageJson?.keywords) ? (packageJson.keywords as ReadonlyArray<unknown>) : []
    if (!keywords.includes("alisio-plugin") && !fs.existsSync(path.join(installed, "alisio-plugin.json"))) {
      return yield* usageError(
        `${name} was installed in ${folder} but is not an Alisio plugin (no "alisio-plugin" keyword); remove it with \`npm uninstall --prefix ${folder} ${name}\`.`
      )
    }
    const recorded = yield* recordPlugin(setup.paths.globalConfigFile, name)
    const version = typeof packageJson?.version === "string" ? `@${packageJson.version}` : ""
    process.stdout.write(
      `Installed ${name}${version} in ${folder}; ${recorded ? "added it to" : "it is already in"} the plugins of ${setup.paths.globalConfigFile}.\n`
    )
  })
