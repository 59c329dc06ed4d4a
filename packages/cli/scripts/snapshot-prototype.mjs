// Issue 17, measured and not done (bench/README.md): a V8 startup snapshot of the `run` path.
// Kept so that the figures can be reproduced; nothing ships it.
//
//   node packages/cli/scripts/snapshot-prototype.mjs [--minify] [node binary…]
//
// builds dist/snapshot/snapshot.cjs (one CommonJS bundle of the program and the `run` path,
// evaluated at build time) and, for each Node binary (default: this one), a blob beside it;
// `node --snapshot-blob <blob> -- run …` then starts from it (the `--` keeps a user's `--version`
// from Node). What a snapshot must not freeze is fixed here at build time, each item below:
// - better-sqlite3 (native) is required on first use, never while building;
// - Effect's clock origins (clock.js: wall time minus hrtime, computed at module scope) and its
//   default Random seed (defaultServices.js) are computed again after deserialization;
// - Effect's logger reads `process.stdout` at module scope (a stream would be a handle in the
//   heap): it sees a stand-in while building, so its default pretty logger's colours are fixed
//   to "no TTY" (the CLI disables that logger);
// - runtime/ProcessOwner.ts reads this process's pid, start time and host at module scope;
// - runtime/internal/terminalText.ts makes an `Intl.Segmenter` (an ICU object, which V8 cannot
//   serialize: the build aborts) at module scope.
// Only commands without an external plugin can start so (dynamic `import()` is unavailable in a
// process started from a snapshot): a launcher would have to check that first.

import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { build } from "esbuild"

const here = (path) => new URL(path, import.meta.url).pathname
const manifest = JSON.parse(readFileSync(here("../package.json"), "utf8"))
const minify = process.argv.includes("--minify")
const nodes = process.argv.slice(2).filter((arg) => arg !== "--minify")
const outdir = here("../dist/snapshot")
const outfile = `${outdir}/snapshot${minify ? "-min" : ""}.cjs`

const entry = `
import { setFlagsFromString, startupSnapshot } from "node:v8"
import { main } from "./main.js"
import * as RunCommand from "./RunCommand.js"
;(globalThis as { __alisioRun?: unknown }).__alisioRun = RunCommand
startupSnapshot.setDeserializeMainFunction(() => {
  const args = process.argv.slice(1)
  if (args[0] === "run") setFlagsFromString("--semi-space-growth-factor=1")
  main([process.execPath, "alisio", ...args])
})
`

const patch = (text, from, to, file) => {
  if (!text.includes(from)) throw new Error(`${file} changed: "${from.slice(0, 60)}" not found`)
  return text.replace(from, to)
}

/** Rewrites a module's source before bundling: `edit(text, file)` returns the new text. */
const rewrite = (build, filter, edit) =>
  build.onLoad({ filter }, ({ path }) => ({
    contents: edit(readFileSync(path, "utf8"), path),
    loader: path.endsWith(".ts") ? "ts" : "js"
  }))

const snapshotSafe = {
  name: "alisio-snapshot-safe",
  setup(build) {
    build.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: "better-sqlite3", namespace: "alisio-lazy" }))
    build.onLoad({ filter: /.*/, namespace: "alisio-lazy" }, () => ({
      contents: `let real
const load = () => (real ??= __alisioRequire("better-sqlite3"))
module.exports = new Proxy(function () {}, {
  construct: (_, args) => Reflect.construct(load(), args),
  apply: (_, self, args) => Reflect.apply(load(), self, args),
  get: (_, key) => load()[key]
})`,
      loader: "js"
    }))
    build.onResolve({ filter: /\/hostModules\.js$/ }, () => ({ path: "hostModules", namespace: "alisio-stub" }))
    build.onLoad({ filter: /.*/, namespace: "alisio-stub" }, () => ({
      contents:
        "export const hostModulesIncluded = false\nexport const loadHostModule = async () => undefined\nexport const preloadCore = async () => {}\n",
      loader: "js"
    }))
    rewrite(build, /effect\/dist\/esm\/internal\/clock\.js$/, (text, file) => {
      const lazy = patch(
        text,
        "  let origin;\n  return () => {",
        "  let origin;\n  __alisioAfterSnapshot(() => { origin = undefined });\n  return () => {",
        file
      )
      return patch(
        lazy,
        "  const origin = /*#__PURE__*/performanceNowNanos() - /*#__PURE__*/processHrtime.bigint();",
        "  let origin = performanceNowNanos() - processHrtime.bigint();\n" +
          "  __alisioAfterSnapshot(() => { origin = performanceNowNanos() - processHrtime.bigint() });",
        file
      )
    })
    rewrite(
      build,
      /effect\/dist\/esm\/internal\/defaultServices\.js$/,
      (text) =>
        `${text}\n__alisioAfterSnapshot(() => { const r = Context.unsafeGet(liveServices, random.randomTag); r.seed = Math.random(); r.PRNG = new r.PRNG.constructor(r.seed) });\n`
    )
    rewrite(build, /runtime\/src\/ProcessOwner\.ts$/, (text, file) =>
      patch(
        text,
        "export const currentOwner: ProcessOwner = makeCurrentOwner()",
        "export let currentOwner: ProcessOwner = makeCurrentOwner()\n__alisioAfterSnapshot(() => { currentOwner = makeCurrentOwner() })",
        file
      )
    )
    rewrite(build, /runtime\/src\/internal\/terminalText\.ts$/, (text, file) =>
      patch(
        text,
        'const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" })',
        'let made: Intl.Segmenter | undefined\nconst segmenter = { segment: (text: string) => (made ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(text) }',
        file
      )
    )
  }
}

const banner = `var __alisioUrl = require("node:url").pathToFileURL(__filename).href;
var __alisioRequire = require("node:module").createRequire(__filename);
var __alisioAfterSnapshot = (f) => { const s = require("node:v8").startupSnapshot; if (s.isBuildingSnapshot()) s.addDeserializeCallback(f) };
var __alisioStdio = ["stdin", "stdout", "stderr"].map((name) => {
  const d = Object.getOwnPropertyDescriptor(process, name);
  Object.defineProperty(process, name, { configurable: true, enumerable: d.enumerable, get: () => ({}) });
  return [name, d];
});`

await build({
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  conditions: ["alisio-source"],
  stdin: { contents: entry, resolveDir: here("../src"), loader: "ts" },
  outfile,
  minifyWhitespace: minify,
  minifySyntax: minify,
  define: { ALISIO_VERSION: JSON.stringify(manifest.version), "import.meta.url": "__alisioUrl" },
  banner: { js: banner },
  footer: { js: "for (const [name, d] of __alisioStdio) Object.defineProperty(process, name, d);" },
  plugins: [snapshotSafe],
  logLevel: "warning"
})

for (const [index, node] of (nodes.length > 0 ? nodes : [process.execPath]).entries()) {
  const blob = `${outfile.slice(0, -4)}-${index}.blob`
  execFileSync(node, ["--snapshot-blob", blob, "--build-snapshot", outfile], { cwd: outdir, stdio: "ignore" })
  console.log(`${node}: ${blob}`)
}
