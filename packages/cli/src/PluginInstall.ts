// `alisio install` / `alisio uninstall` (PRV-3), and `plugins install` / `plugins remove`: npm
// installs a plugin package (a provider package is a plugin that registers providers) into
// `<config>/plugins/`, and the `plugins` list of config.yaml names it.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { closeMatches } from "@alisio/domain/CloseMatches"
import * as ConfigEdits from "@alisio/runtime/ConfigEdits"
import { makeFoldersSync } from "@alisio/runtime/Folders"
import * as PluginHost from "@alisio/runtime/PluginHost"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import { loadSetup, runtimeLayer, type Setup } from "./App.js"
import { CliError, ExitCode, usageError } from "./CliError.js"
import {
  expandHome,
  folderPackageName,
  isPackageName,
  isPathSpec,
  packageNameOf,
  parseInstallSpec,
  quoted,
  shown
} from "./PluginSpec.js"
import { noPluginFlags } from "./Plugins.js"

/** `npm:name@1` is how the spec names a registry package; npm reads the rest of the spec itself. */
const withoutNpmPrefix = (spec: string): string => (spec.startsWith("npm:") ? spec.slice(4) : spec)

const readJson = (file: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
  } catch {
    return undefined
  }
}

const dependencyEntries = (folder: string): ReadonlyArray<readonly [string, unknown]> => {
  const dependencies = readJson(path.join(folder, "package.json"))?.dependencies
  return typeof dependencies === "object" && dependencies !== null ? Object.entries(dependencies) : []
}

const dependenciesOf = (folder: string): ReadonlyArray<string> => dependencyEntries(folder).map(([name]) => name)

/** The dependency npm recorded for a local path (`file:../x.tgz`), whatever the package inside calls itself. */
const dependencyFrom = (folder: string, target: string): string | undefined =>
  dependencyEntries(folder).find(
    ([, value]) =>
      typeof value === "string" && value.startsWith("file:") && path.resolve(folder, value.slice(5)) === target
  )?.[0]

/** Copies what npm (and a script it runs) prints to our stderr, each line marked `npm: `. */
const attributed = (stream: NodeJS.ReadableStream) => {
  let rest = ""
  const write = (line: string) => process.stderr.write(`npm: ${terminalSafe(line)}\n`)
  stream.setEncoding("utf8")
  stream.on("data", (chunk: string) => {
    const lines = (rest + chunk).split(/\r?\n/)
    rest = lines.pop() ?? ""
    for (const line of lines) write(line)
  })
  stream.on("end", () => {
    if (rest !== "") write(rest)
  })
}

/** Runs npm, its output on our stderr (stdout stays for results). */
const npm = (args: ReadonlyArray<string>) =>
  Effect.async<number, CliError>((resume) => {
    const child = spawn("npm", args, { stdio: ["ignore", "pipe", "pipe"], env: process.env })
    attributed(child.stdout)
    attributed(child.stderr)
    child.on("error", (error: NodeJS.ErrnoException) =>
      resume(
        Effect.fail(
          new CliError({
            message:
              error.code === "ENOENT"
                ? "npm was not found on PATH; Alisio installs plugins with npm (it comes with Node.js)."
                : `npm could not be started: ${error.message}`,
            exitCode: ExitCode.failed
          })
        )
      )
    )
    child.on("close", (code) => resume(Effect.succeed(code ?? 1)))
    return Effect.sync(() => child.kill())
  })

/** Without `allowScripts` npm runs no install script of the package or its dependencies: installing runs none of its code. */
const npmIn = (folder: string, args: ReadonlyArray<string>, allowScripts = false) =>
  npm([...args, "--prefix", folder, "--no-audit", "--no-fund", ...(allowScripts ? [] : ["--ignore-scripts"])])

const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"]

/** The install scripts a package.json declares, that npm skipped. */
const skippedScripts = (packageJson: Record<string, unknown> | undefined): ReadonlyArray<string> => {
  const scripts = packageJson?.scripts
  if (typeof scripts !== "object" || scripts === null) return []
  return INSTALL_SCRIPTS.filter((name) => typeof (scripts as Record<string, unknown>)[name] === "string")
}

const configFailed = (error: { readonly message: string }) => usageError(error.message)

/** What the plugin now offers, as `plugins list` would say it; a plugin that does not load fails the command. */
const describeInstalled = (setup: Setup, name: string, remove: string) =>
  Effect.gen(function* () {
    const host = yield* PluginHost.PluginHost
    // A package that could not be read as a plugin (its manifest asks for another API) is reported under its name.
    const report = (yield* host.plugins).find(
      (candidate) => candidate.from === `config ${name}` || (candidate.from === name && !candidate.loaded)
    )
    if (report === undefined) return
    if (!report.loaded) {
      const why = report.diagnostics.length === 0 ? report.id : report.diagnostics.join("; ")
      return yield* new CliError({
        message: terminalSafe(
          `${name} is installed but does not load: ${why}. Fix it, or remove it with \`${remove} ${name}\`.`
        ),
        exitCode: ExitCode.failed
      })
    }
    const lines = [
      ...report.providers.map(
        (provider) => `  provider ${provider}: \`alisio models\` lists its models; use one with -m ${provider}/<model>`
      ),
      ...(report.tools.length === 0 ? [] : [`  tools: ${report.tools.join(", ")}`]),
      ...(report.commands.length === 0 ? [] : [`  commands: ${report.commands.map((c) => `/${c}`).join(", ")}`])
    ]
    if (lines.length > 0)
      process.stdout.write(`${terminalSafe(`It adds (plugin ${report.id}):\n${lines.join("\n")}`)}\n`)
  }).pipe(Effect.provide(runtimeLayer(setup, { approveAll: false, plugins: noPluginFlags, quiet: true })))

/**
 * `alisio install <npm:package|package|path>`: npm installs it into `<config>/plugins/`, config.yaml
 * lists it. `remove` is the command a message names to take it out again, as the person typed install.
 */
export const installPlugin = (
  flags: { readonly spec: string; readonly allowScripts?: boolean | undefined },
  remove = "alisio uninstall"
) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const file = setup.paths.globalConfigFile
    const folder = path.join(setup.paths.configHome, "plugins")
    const spec = yield* parseInstallSpec(flags.spec, folder)
    // A config.yaml that cannot take the entry is found before npm changes anything.
    yield* ConfigEdits.checkEditable(file).pipe(Effect.mapError(configFailed))
    const target = spec._tag === "package" ? spec.spec : spec.path
    const manifest = path.join(folder, "package.json")
    yield* Effect.try({
      try: () => {
        makeFoldersSync(folder, 0o700)
        if (!fs.existsSync(manifest)) {
          fs.writeFileSync(manifest, `${JSON.stringify({ name: "alisio-plugins", private: true }, null, 2)}\n`)
        }
      },
      catch: (error) =>
        new CliError({
          message: `Cannot prepare ${folder} for plugins (${error instanceof Error ? error.message : String(error)}); make it writable, or set ALISIO_HOME to a folder you can write.`,
          exitCode: ExitCode.failed
        })
    })
    const before = new Set(dependenciesOf(folder))
    // Peer dependencies (effect, @alisio/domain) are not installed: Alisio gives plugins its own.
    const code = yield* npmIn(folder, ["install", "--save", "--legacy-peer-deps", target], flags.allowScripts)
    if (code !== 0) {
      return yield* new CliError({
        message: `npm could not install ${flags.spec} (exit code ${code}); its output is above.`,
        exitCode: ExitCode.failed
      })
    }
    const added = dependenciesOf(folder).filter((name) => !before.has(name))
    const name =
      spec._tag === "folder"
        ? spec.name
        : spec._tag === "tarball"
          ? (dependencyFrom(folder, spec.path) ?? added[0])
          : (added[0] ?? packageNameOf(spec.spec))
    if (name === undefined || !isPackageName(name)) {
      return yield* new CliError({
        message: `npm installed ${quoted(flags.spec)}, but which package it added is not clear; \`alisio plugins list\` shows what loads.`,
        exitCode: ExitCode.failed
      })
    }
    const packageJson = readJson(path.join(folder, "node_modules", name, "package.json"))
    const keywords = Array.isArray(packageJson?.keywords) ? (packageJson.keywords as ReadonlyArray<unknown>) : []
    const manifested = fs.existsSync(path.join(folder, "node_modules", name, "alisio-plugin.json"))
    if (!keywords.includes("alisio-plugin") && !manifested) {
      const removed = added.includes(name) && (yield* npmIn(folder, ["uninstall", "--save", name])) === 0
      return yield* usageError(
        `${name} is not an Alisio plugin (its package.json has no "alisio-plugin" keyword)` +
          (removed ? ", so it was removed again." : `; remove it with \`${remove} ${name}\`.`)
      )
    }
    const skipped = flags.allowScripts === true ? [] : skippedScripts(packageJson)
    if (skipped.length > 0) {
      process.stderr.write(
        `alisio: ${name}'s install scripts (${skipped.join(", ")}) did not run; if it needs them, install it again with --allow-scripts.\n`
      )
    }
    const recorded = yield* ConfigEdits.addPlugin(file, name).pipe(Effect.mapError(configFailed))
    const version = typeof packageJson?.version === "string" ? `@${packageJson.version}` : ""
    process.stdout.write(
      `Installed ${name}${version} in ${folder}; ${recorded ? "added it to" : "it is already in"} the plugins of ${file}.\n`
    )
    const listed = setup.config.plugins ?? []
    yield* describeInstalled(
      { ...setup, config: { ...setup.config, plugins: recorded ? [...listed, name] : listed } },
      name,
      remove
    )
  })

/** `alisio uninstall <package>`: npm removes it from `<config>/plugins/`, and config.yaml no longer lists it. */
export const uninstallPlugin = (flags: { readonly name: string }) =>
  Effect.gen(function* () {
    const setup = yield* loadSetup({})
    const file = setup.paths.globalConfigFile
    const folder = path.join(setup.paths.configHome, "plugins")
    const spec = withoutNpmPrefix(flags.name.trim())
    if (spec === "") return yield* usageError("Name the package to remove, as `alisio plugins list` shows it.")
    // The folder it was installed from, or a config entry names, names it too.
    const fromPath = isPathSpec(spec) ? path.resolve(expandHome(spec)) : undefined
    const name = fromPath === undefined ? packageNameOf(spec) : folderPackageName(fromPath)
    const installed = name !== undefined && dependenciesOf(folder).includes(name)
    const names = (entry: string) =>
      entry === spec ||
      entry === name ||
      (fromPath !== undefined &&
        isPathSpec(entry) &&
        path.resolve(setup.paths.configHome, expandHome(entry)) === fromPath)
    const listed = yield* ConfigEdits.removePlugin(file, names).pipe(Effect.mapError(configFailed))
    if (!installed && !listed) {
      const known = [
        ...dependenciesOf(folder),
        ...(setup.config.plugins ?? []).map((entry) => (typeof entry === "string" ? entry : entry.source))
      ]
      const typed = name ?? spec
      const near = [
        ...new Set([
          ...closeMatches(typed, known, 3),
          ...known.filter((other) => typed.length >= 3 && other.endsWith(typed))
        ])
      ].slice(0, 3)
      return yield* usageError(
        `${shown(typed)} is neither installed in ${folder} nor in the plugins of ${file}` +
          (near.length > 0
            ? `; did you mean ${near.map((other) => shown(other)).join(" or ")}?`
            : "; `alisio plugins list` shows each plugin and where it comes from.")
      )
    }
    const label = name ?? spec
    if (installed) {
      const code = yield* npmIn(folder, ["uninstall", "--save", label])
      if (code !== 0) {
        return yield* new CliError({
          message: `npm could not remove ${label} from ${folder} (exit code ${code}); its output is above.`,
          exitCode: ExitCode.failed
        })
      }
    }
    const where = [installed ? `from ${folder}` : undefined, listed ? `from the plugins of ${file}` : undefined]
    process.stdout.write(`${terminalSafe(`Removed ${label} ${where.filter((w) => w !== undefined).join(" and ")}.`)}\n`)
  })
