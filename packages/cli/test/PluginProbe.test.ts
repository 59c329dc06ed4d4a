import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { mayLoadExternalPlugins } from "alisio/PluginProbe"

describe("PluginProbe", () => {
  let root = ""
  let env: NodeJS.ProcessEnv = {}
  let project = ""
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "alisio-probe-"))
    env = { ALISIO_HOME: join(root, "home") }
    project = join(root, "project")
    mkdirSync(join(root, "home"), { recursive: true })
    mkdirSync(project, { recursive: true })
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  const probe = (...args: ReadonlyArray<string>) => mayLoadExternalPlugins(args, env, project)

  it("PL-1 PRV-3 nothing configured: the lean build; --plugin, `plugins` and `install` take the plugin build", () => {
    assert.isFalse(probe("run", "hi"))
    assert.isTrue(probe("run", "--plugin", "./x", "hi"))
    assert.isTrue(probe("run", "--plugin=./x", "hi"))
    assert.isTrue(probe("plugins", "list"))
    assert.isTrue(probe("plugins", "install", "./x"))
    assert.isTrue(probe("install", "npm:x"))
    assert.isFalse(probe("plugins", "remove", "x"))
    assert.isFalse(probe("uninstall", "x"))
    assert.isFalse(probe("run", "--plugin", "./x", "--help"))
    assert.isFalse(probe("sessions", "list", "--plugin", "./x"))
  })

  it("PL-1 a plugins list in config.yaml or anything in <config>/plugins/ takes the plugin build, unless read-only", () => {
    writeFileSync(join(root, "home", "config.yaml"), "limits:\n  maxTurns: 3\n")
    assert.isFalse(probe("run", "hi"))
    writeFileSync(join(root, "home", "config.yaml"), "limits:\n  maxTurns: 3\nplugins:\n  - weather\n")
    assert.isTrue(probe("run", "hi"))
    // PRV-3: a provider package's models are listed and chosen like the others.
    assert.isTrue(probe("models"))
    assert.isTrue(probe("models", "use", "echo:echo/reverse"))
    assert.isFalse(probe("run", "--read-only", "hi"))
    writeFileSync(join(root, "home", "config.yaml"), "")
    mkdirSync(join(root, "home", "plugins", "greeter"), { recursive: true })
    assert.isTrue(probe("run", "hi"))
  })

  it("PL-3 a project's plugins count only with --trust-project (and --cwd names the project)", () => {
    mkdirSync(join(project, ".alisio", "plugins", "local"), { recursive: true })
    assert.isFalse(probe("run", "hi"))
    assert.isTrue(probe("run", "--trust-project", "hi"))
    const elsewhere = join(root, "elsewhere")
    mkdirSync(elsewhere)
    assert.isFalse(mayLoadExternalPlugins(["run", "--trust-project", "--cwd", elsewhere, "hi"], env, project))
  })

  it("PL-3 a trusted project's config.yaml linked to a pipe is not read (it would block every start)", () => {
    mkdirSync(join(project, ".alisio"), { recursive: true })
    execFileSync("mkfifo", [join(root, "queue")])
    symlinkSync(join(root, "queue"), join(project, ".alisio", "config.yaml"))
    assert.isFalse(probe("run", "--trust-project", "hi"))
  })
})
