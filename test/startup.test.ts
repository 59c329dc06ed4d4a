// Start-up stays lazy: what `--version` and `--help` load statically must not hold SQLite (it loads
// when a command that needs it runs); no command loads the openai SDK (the adapter speaks HTTP with
// fetch), and `run` does not load `yaml` before a file needs it. Speed itself is measured in bench/.

import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import * as nodeModule from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { cliBin } from "./support/cli.js"

/** The files a module pulls in through static imports, itself included. */
const staticGraph = (entry: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const text = readFileSync(file, "utf8")
    for (const match of text.matchAll(/(?:^|[;\s])(?:import|export)\s[^;]*?from\s*"(\.\/[^"]+)"/g)) {
      visit(join(dirname(file), match[1]!))
    }
  }
  visit(entry)
  return [...seen]
}

const dynamicTarget = (file: string, name: RegExp): string => {
  const match = new RegExp(`import\\("(\\./${name.source})"\\)`).exec(readFileSync(file, "utf8"))
  assert.isNotNull(match, `no dynamic import of ${name.source} in ${file}`)
  return join(dirname(file), match![1]!)
}

const holdsHeavyParts = (files: ReadonlyArray<string>) => {
  const text = files.map((file) => readFileSync(file, "utf8")).join("\n")
  return {
    sqlite: text.includes("better-sqlite3"),
    openai: /\bOpenAI = class\b|\bclass OpenAI\b/.test(text),
    yaml: /\bclass LineCounter\b/.test(text)
  }
}

/** Whether pi-tui (the interactive UI's renderer) is among the files. */
const holdsTui = (files: ReadonlyArray<string>) =>
  files.some((file) => /\bTuiMainScreen\b/.test(readFileSync(file, "utf8")))

describe("start-up", () => {
  it("--version prints the version and loads nothing but the entry", () => {
    const result = spawnSync(process.execPath, [cliBin, "--version"], { encoding: "utf8" })
    const manifest = JSON.parse(readFileSync(join(dirname(cliBin), "..", "..", "package.json"), "utf8")) as {
      version: string
    }
    assert.strictEqual(result.stdout, `alisio ${manifest.version}\n`)
    assert.deepStrictEqual(holdsHeavyParts(staticGraph(cliBin)), { sqlite: false, openai: false, yaml: false })
    assert.isFalse(holdsTui(staticGraph(cliBin)), "--version does not load the interactive UI")
  })

  it("CLI-1 the interactive UI loads only with `alisio` itself: run and --help never load pi-tui", () => {
    const main = dynamicTarget(cliBin, /main-[A-Z0-9]+\.js/)
    const run = dynamicTarget(main, /RunCommand-[A-Z0-9]+\.js/)
    const tui = dynamicTarget(main, /TuiCommand-[A-Z0-9]+\.js/)
    assert.isFalse(holdsTui(staticGraph(main)), "the command tree")
    assert.isFalse(holdsTui(staticGraph(run)), "alisio run")
    assert.isTrue(holdsTui(staticGraph(tui)), "alisio")
    // The editor is up before SQLite, the providers and the plugins load (they come with Session).
    assert.deepStrictEqual(holdsHeavyParts(staticGraph(tui)), { sqlite: false, openai: false, yaml: false })
  })

  it("CLI-1 a bare `alisio` opens the interactive UI without loading @effect/cli or the command tree", () => {
    const tuiMain = dynamicTarget(cliBin, /TuiMain-[A-Z0-9]+\.js/)
    const files = staticGraph(tuiMain)
    const text = files.map((file) => readFileSync(file, "utf8")).join("\n")
    assert.isTrue(holdsTui(files), "the UI's first frame")
    assert.notMatch(text, /\bgetUsage\b/, "@effect/cli")
    assert.notInclude(text, "--first-token-timeout", "the flags of run")
  })

  it("CLI-1 `alisio run` starts without loading @effect/cli or the command tree", () => {
    // `alisio run` has a build of its own, one CommonJS file (scripts/bundle.mjs) bin.js loads.
    assert.include(readFileSync(cliBin, "utf8"), '"./run.cjs"')
    const text = readFileSync(join(dirname(cliBin), "run.cjs"), "utf8")
    assert.notMatch(text, /\bgetUsage\b/, "@effect/cli")
    assert.notInclude(text, "sessions-rm", "the command tree")
    assert.notMatch(text, /\bTuiMainScreen\b/, "the interactive UI")
    assert.deepStrictEqual(holdsHeavyParts([join(dirname(cliBin), "run.cjs")]), {
      sqlite: true,
      openai: false,
      yaml: false
    })
  })

  it("--help is answered from the help the bundle embeds: neither Effect nor @effect/cli loads", () => {
    const helpFast = dynamicTarget(cliBin, /HelpFast-[A-Z0-9]+\.js/)
    const text = staticGraph(helpFast)
      .map((file) => readFileSync(file, "utf8"))
      .join("\n")
    assert.notMatch(text, /\bFiberRuntime = class\b/, "the Effect runtime")
    assert.notMatch(text, /\bgetUsage\b/, "@effect/cli")
    assert.include(text, "--first-token-timeout", "the flags of run, described at build time")
  })

  it("--help loads the command tree without SQLite; run loads SQLite but neither the openai SDK nor yaml", () => {
    const main = dynamicTarget(cliBin, /main-[A-Z0-9]+\.js/)
    assert.deepStrictEqual(holdsHeavyParts(staticGraph(main)), { sqlite: false, openai: false, yaml: false })
    const run = dynamicTarget(main, /RunCommand-[A-Z0-9]+\.js/)
    assert.deepStrictEqual(holdsHeavyParts(staticGraph(run)), { sqlite: true, openai: false, yaml: false })
    const help = spawnSync(process.execPath, [cliBin, "run", "--help"], { encoding: "utf8" })
    assert.strictEqual(help.status, 0)
    assert.include(help.stdout, "--first-token-timeout")
  })

  it.skipIf(typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache !== "function")(
    "every command sets the same V8 flags, so one command's compiled code in Node's compile cache serves the next",
    () => {
      // V8 refuses cached code compiled under other flags; Node then compiles afresh and rewrites the cache.
      const cache = mkdtempSync(join(tmpdir(), "alisio-compile-cache-"))
      const home = mkdtempSync(join(tmpdir(), "alisio-home-"))
      const env = {
        ...process.env,
        ALISIO_HOME: home,
        NODE_COMPILE_CACHE: cache,
        NODE_DEBUG_NATIVE: "COMPILE_CACHE",
        OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
        OPENAI_API_KEY: "k"
      }
      const cli = (...args: ReadonlyArray<string>) =>
        spawnSync(process.execPath, [cliBin, ...args], { encoding: "utf8", env }).stderr
      cli("sessions", "list")
      const run = cli("run", "-m", "openai/m", "hi")
      assert.include(run, "was accepted", "the run found the code `sessions list` compiled")
      assert.notInclude(run, "was rejected")
      assert.notInclude(cli("sessions", "list"), "was rejected")
    }
  )

  it("the V8 flags set at start are all known to this Node: a run's start prints nothing on stderr", () => {
    // `alisio run` sets every flag it sets (V8Flags.ts) before it answers `--help`; a flag this
    // Node's V8 does not know would print "unrecognized flag" on stderr.
    const help = spawnSync(process.execPath, [cliBin, "run", "--help"], { encoding: "utf8" })
    assert.strictEqual(help.status, 0)
    assert.strictEqual(help.stderr, "")
  })
})
