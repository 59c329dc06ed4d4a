// Bundles the CLI into dist/bundle: one ESM graph with a few chunks instead of ~1 000 modules,
// which cuts start-up by seconds of module resolution. better-sqlite3 (native) stays external.
//
// Three builds: dist/bundle (bin.js and the program), dist/bundle/plugins (the program again,
// with the modules it shares with external plugins) and dist/bundle/run.cjs (`alisio run` alone,
// from RunMain.ts). Sharing a module whole keeps all of it in the bundle, which costs a run about
// 150 ms of CPU; bin.js takes the second build only for a command that may load an external plugin
// (src/PluginProbe.ts). The first and third builds replace the shared-module table with a stub.
// The third is one CommonJS file, which bin.js compiles with a V8 code cache written after a run
// (src/CodeCache.ts): split among every command's entry points, a run loaded 34 chunks, each
// resolved, read and linked by Node's loader, and compiled ~3 500 functions on first call each time
// (bench/README.md). Its content hash names its cache. The MCP SDK it may need is a fourth, one
// CommonJS file beside it (run-mcp.cjs, below), loaded only when a server first starts.

import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { build } from "esbuild"

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))

const outdir = new URL("../dist/bundle", import.meta.url).pathname
rmSync(outdir, { recursive: true, force: true })

const common = {
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  conditions: ["alisio-source"],
  external: ["better-sqlite3"],
  banner: {
    js: 'import { createRequire as __alisioRequire } from "node:module"; const require = __alisioRequire(import.meta.url);'
  },
  logLevel: "warning"
}

const withoutSharedModules = {
  name: "alisio-without-shared-modules",
  setup(build) {
    build.onResolve({ filter: /\/hostModules\.js$/ }, () => ({ path: "hostModules", namespace: "alisio-stub" }))
    build.onLoad({ filter: /.*/, namespace: "alisio-stub" }, () => ({
      contents:
        "export const hostModulesIncluded = false\nexport const loadHostModule = async () => undefined\nexport const preloadCore = async () => {}\n",
      loader: "js"
    }))
  }
}

/**
 * What help shows of every command, described from the sources' command tree by `Help.describe`:
 * bin.js answers `--help` from it without loading the program (HelpFast.ts).
 */
const helpTree = async () => {
  // Inside the package, so that its externals (better-sqlite3) resolve.
  mkdirSync(new URL("../dist", import.meta.url), { recursive: true })
  const folder = mkdtempSync(new URL("../dist/help-tree-", import.meta.url).pathname)
  try {
    const outfile = join(folder, "describe.mjs")
    await build({
      ...common,
      splitting: false,
      stdin: {
        contents: 'export { describe } from "./src/Help.ts"\nexport { commandLine } from "./src/main.ts"\n',
        resolveDir: new URL("..", import.meta.url).pathname,
        loader: "ts"
      },
      outfile,
      define: { ALISIO_VERSION: JSON.stringify(manifest.version) }
    })
    const { describe, commandLine } = await import(pathToFileURL(outfile).href)
    return JSON.stringify(describe(commandLine))
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

/**
 * Escapes what is left of non-ASCII in the output (esbuild escapes it in strings, not in comments
 * and regular expressions): a source with one such character is decoded by Node and held by V8 as
 * UTF-16, which cost a run's imports ~13 ms of CPU and ~1 MB (Node 24, bench/README.md). A `\u`
 * escape means the same character everywhere it can appear here; a character already escaped with
 * a backslash would not, so it stops the build.
 */
const escapeFile = (file) => {
  const text = readFileSync(file, "utf8")
  if (!/[\u0080-\uffff]/.test(text)) return
  if (/\\[\u0080-\uffff]/.test(text)) throw new Error(`${file}: a non-ASCII character after a backslash`)
  writeFileSync(
    file,
    text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
  )
}

const escapeNonAscii = (dir) => {
  for (const name of readdirSync(dir)) {
    const file = join(dir, name)
    if (statSync(file).isDirectory()) escapeNonAscii(file)
    else if (name.endsWith(".js") || name.endsWith(".cjs")) escapeFile(file)
  }
}

/**
 * The MCP SDK with zod, ajv and the rest it brings (~710 KB), which a run without MCP servers never
 * evaluates: internal/mcp/thirdParty.ts is its one door, and the run build loads it from a file of
 * its own, run-mcp.cjs, when a server first starts. Left in run.cjs, its text was read, copied and
 * held by every run (bench/README.md, stop 24). Only the run build does this: the ESM builds split
 * it into chunks of their own already.
 *
 * run-mcp.cjs is wrapped as run.cjs is and compiled by the same CodeCache.ts (bundled into run.cjs
 * as well), with a cache of its own written at the exit of a run that loaded it: a run with two
 * servers took ~45 ms less CPU on Node 20 with it than with a plain `require`, ~85 ms on Node 24
 * (where Node's own compile cache keeps only the top level; bench/README.md, stop 24). It holds the SDK's modules and nothing of ours, so no Effect (a
 * second copy of Effect in a process does not know the first one's fibers), which is checked here.
 * Returns the hash of its content, which names its cache.
 */
const mcpFile = "run-mcp.cjs"

const runMcpBuild = async () => {
  const outfile = `${outdir}/${mcpFile}`
  const { metafile } = await build({
    ...common,
    splitting: false,
    format: "cjs",
    entryPoints: [new URL("../../runtime/src/internal/mcp/thirdParty.ts", import.meta.url).pathname],
    outfile,
    banner: { js: '(function (exports, require, module, __filename, __dirname) {"use strict";' },
    footer: { js: "})" },
    metafile: true
  })
  const inputs = Object.keys(metafile.inputs)
  const ours = inputs.filter((input) => !input.includes("node_modules/") && !input.endsWith("/mcp/thirdParty.ts"))
  const effect = inputs.filter((input) => /node_modules\/(\.pnpm\/)?(@effect|effect)[/+@]/.test(input))
  if (ours.length > 0 || effect.length > 0)
    throw new Error(`${mcpFile} must hold the SDK alone, not ${[...ours, ...effect].join(", ")}`)
  escapeFile(outfile)
  return createHash("sha256").update(readFileSync(outfile)).digest("hex").slice(0, 16)
}

/** In the run build, what the MCP modules import as ./thirdParty.js: run-mcp.cjs, code-cached. */
const mcpApart = (mcpBuildId) => ({
  name: "alisio-mcp-apart",
  setup(build) {
    build.onResolve({ filter: /^\.\/thirdParty\.js$/ }, ({ importer }) =>
      /[/\\]internal[/\\]mcp[/\\][^/\\]+$/.test(importer) ? { path: "mcp", namespace: "alisio-mcp" } : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "alisio-mcp" }, () => ({
      contents: [
        'const { requireWithCodeCache } = require("./CodeCache.ts")',
        `const mcp = requireWithCodeCache(require("node:path").join(__dirname, ${JSON.stringify(mcpFile)}), ${JSON.stringify(mcpBuildId)}, "mcp")`,
        // Only the run build's code, running the command, gets here.
        "mcp.keepAtExit()",
        "module.exports = mcp.exports",
        ""
      ].join("\n"),
      loader: "js",
      resolveDir: new URL("../src", import.meta.url).pathname
    }))
  }
})

/**
 * `alisio run` as one CommonJS module (src/CodeCache.ts says why), ASCII like the rest, which
 * CodeCache.ts relies on; returns the hash of its content, which names its code cache.
 */
const runBuild = async (mcpBuildId) => {
  const outfile = `${outdir}/run.cjs`
  const { metafile } = await build({
    ...common,
    splitting: false,
    format: "cjs",
    entryPoints: [new URL("../src/RunMain.ts", import.meta.url).pathname],
    outfile,
    // One function expression, as Node's loader wraps a CommonJS module, so that CodeCache.ts
    // compiles the file's text as it is read; strict, as ESM is.
    banner: {
      js: '(function (exports, require, module, __filename, __dirname) {"use strict";\nconst __alisioUrl = require("node:url").pathToFileURL(__filename).href;'
    },
    footer: { js: "})" },
    define: { ALISIO_VERSION: JSON.stringify(manifest.version), "import.meta.url": "__alisioUrl" },
    plugins: [withoutSharedModules, mcpApart(mcpBuildId)],
    metafile: true
  })
  // An MCP module importing the SDK other than through thirdParty.ts would bring it back.
  const sdk = Object.keys(metafile.inputs).filter((input) =>
    input.includes("node_modules/.pnpm/@modelcontextprotocol+")
  )
  if (sdk.length > 0) throw new Error(`run.cjs must not hold the MCP SDK (${sdk[0]}): import it through thirdParty.ts`)
  escapeFile(outfile)
  return createHash("sha256").update(readFileSync(outfile)).digest("hex").slice(0, 16)
}

const runBuildId = await runBuild(await runMcpBuild())

await build({
  ...common,
  entryPoints: [new URL("../src/bin.ts", import.meta.url).pathname],
  outdir,
  define: {
    ALISIO_VERSION: JSON.stringify(manifest.version),
    ALISIO_PLUGIN_BUILD: JSON.stringify("./plugins/main.js"),
    ALISIO_RUN_BUILD: JSON.stringify("./run.cjs"),
    ALISIO_RUN_BUILD_ID: JSON.stringify(runBuildId),
    ALISIO_HELP_TREE: JSON.stringify(await helpTree())
  },
  plugins: [withoutSharedModules]
})

await build({
  ...common,
  entryPoints: { main: new URL("../src/main.ts", import.meta.url).pathname },
  outdir: `${outdir}/plugins`,
  define: { ALISIO_VERSION: JSON.stringify(manifest.version) }
})

escapeNonAscii(outdir)
