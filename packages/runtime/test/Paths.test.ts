import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs"
import { isAbsolute, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Paths from "../src/Paths.js"
import { tempDir } from "./fixtures/storeTesting.js"

const mode = (path: string) => statSync(path).mode & 0o777

describe("Paths", () => {
  it.scoped(
    "ST-6 tightenStateHome narrows the state folder, its files and the blob folders once, saying what changed",
    () =>
      Effect.gen(function* () {
        const stateHome = join(yield* tempDir, "state")
        const blobFolder = join(stateHome, "blobs", "sha256", "ab")
        mkdirSync(blobFolder, { recursive: true })
        for (const folder of [stateHome, join(stateHome, "blobs"), join(stateHome, "blobs", "sha256"), blobFolder]) {
          chmodSync(folder, 0o755)
        }
        for (const name of ["alisio.db", "alisio.db-wal", "alisio.db-shm", "active-model.json"]) {
          writeFileSync(join(stateHome, name), "")
          chmodSync(join(stateHome, name), 0o644)
        }
        writeFileSync(join(stateHome, "private"), "")
        chmodSync(join(stateHome, "private"), 0o600)

        const tightened = yield* Paths.tightenStateHome(stateHome)
        assert.sameMembers(
          tightened.map((entry) => [entry.path.slice(stateHome.length), entry.from, entry.to].join(" ")),
          [
            ` ${0o755} ${0o700}`,
            `/alisio.db ${0o644} ${0o600}`,
            `/alisio.db-wal ${0o644} ${0o600}`,
            `/alisio.db-shm ${0o644} ${0o600}`,
            `/active-model.json ${0o644} ${0o600}`,
            `/blobs ${0o755} ${0o700}`,
            `/blobs/sha256 ${0o755} ${0o700}`,
            `/blobs/sha256/ab ${0o755} ${0o700}`
          ]
        )
        assert.strictEqual(mode(stateHome), 0o700)
        assert.strictEqual(mode(join(stateHome, "alisio.db-wal")), 0o600)
        assert.strictEqual(mode(blobFolder), 0o700)
        assert.strictEqual(mode(join(stateHome, "private")), 0o600)
        const line = Paths.describeTightened(stateHome, tightened)
        assert.include(line, `the state in ${stateHome} was readable by other users`)
        assert.include(line, ". (was 0755)")
        assert.include(line, "alisio.db (was 0644)")
        assert.notInclude(line, "\n")

        assert.deepStrictEqual(yield* Paths.tightenStateHome(stateHome), [], "nothing left to say the next time")
        assert.deepStrictEqual(yield* Paths.tightenStateHome(join(stateHome, "missing")), [])
      })
  )

  it.effect("ST-6 an empty or relative HOME never puts the state in the folder Alisio starts in", () =>
    Effect.gen(function* () {
      const saved = process.env.HOME
      try {
        for (const home of ["", "relative/home"]) {
          process.env.HOME = home
          const paths = yield* Paths.make.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
          assert.isTrue(isAbsolute(paths.stateHome), paths.stateHome)
          assert.isFalse(paths.stateHome.startsWith(process.cwd()), paths.stateHome)
          assert.isTrue(isAbsolute(Paths.userHome()))
        }
      } finally {
        if (saved === undefined) delete process.env.HOME
        else process.env.HOME = saved
      }
    })
  )
})

describe("Paths.resolve", () => {
  const home = "/home/ana"
  const at = (ALISIO_HOME: string | undefined) =>
    Paths.resolve({ ALISIO_HOME, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined, home })

  it("CFG-1 ALISIO_HOME with a leading ~ (quoted in a service file or .env) is under the user's home, not ./~", () => {
    assert.strictEqual(at("~/alisio").configHome, "/home/ana/alisio")
    assert.strictEqual(at("~/alisio").stateHome, "/home/ana/alisio/state")
    assert.strictEqual(at("~").globalConfigFile, "/home/ana/config.yaml")
    assert.strictEqual(at(" /srv/alisio \n").configHome, "/srv/alisio")
  })

  it("CFG-1 a blank ALISIO_HOME is unset: the XDG folders, not a folder named by spaces", () => {
    for (const blank of [undefined, "", "  ", "\n"]) {
      assert.strictEqual(at(blank).configHome, "/home/ana/.config/alisio")
      assert.strictEqual(at(blank).stateHome, "/home/ana/.local/state/alisio")
    }
    assert.isTrue(isAbsolute(at("relative").configHome))
  })
})
