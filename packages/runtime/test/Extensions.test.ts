import type { MascotProvider, StartupScreenProvider, TerminalCapabilities } from "@alisio/domain/Extensions"
import * as Extensions from "@alisio/runtime/Extensions"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"

const terminal = (overrides: Partial<TerminalCapabilities> = {}): TerminalCapabilities => ({
  columns: 80,
  rows: 24,
  color: false,
  unicode: true,
  ...overrides
})

const mascot = (...lines: ReadonlyArray<string>): MascotProvider => ({ render: () => Effect.succeed(lines) })
const screen = (render: StartupScreenProvider["render"]): StartupScreenProvider => ({ render })

/** Columns a line takes, counting the CJK and emoji used in these tests as two. */
const columnsOf = (line: string): number =>
  [...line].reduce(
    (width, char) => width + (/[\u3000-\u9fff\uff00-\uff60]|\p{Emoji_Presentation}/u.test(char) ? 2 : 1),
    0
  )

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the screen must not contain
const NO_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

const permutations = <A>(items: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  items.length <= 1
    ? [items]
    : items.flatMap((item, index) =>
        permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest])
      )

describe("Extensions", () => {
  it.effect("EX-2 the winner and the conflicts do not depend on the order plugins register in", () =>
    Effect.gen(function* () {
      const providers = {
        zeta: mascot("zeta"),
        alphaFirst: mascot("alpha first"),
        alphaSecond: mascot("alpha second"),
        beta: mascot("beta"),
        screenLow: screen(() => Effect.succeed(["low"])),
        screenHigh: screen(() => Effect.succeed(["high"]))
      }
      // Each plugin's own registrations keep their order; the plugins come in every order.
      const plugins: ReadonlyArray<ReadonlyArray<readonly [string, "mascot" | "startup-screen", unknown, number]>> = [
        [
          ["zeta", "mascot", providers.zeta, 5],
          ["zeta", "startup-screen", providers.screenHigh, 2]
        ],
        [
          ["alpha", "mascot", providers.alphaFirst, 5],
          ["alpha", "mascot", providers.alphaSecond, 5]
        ],
        [
          ["beta", "mascot", providers.beta, 1],
          ["beta", "startup-screen", providers.screenLow, 1]
        ]
      ]
      const orders = permutations(plugins)
      assert.strictEqual(orders.length, 6)
      for (const order of orders) {
        const registry = yield* Extensions.make()
        for (const [pluginId, point, provider, priority] of order.flat()) {
          yield* registry.register(pluginId, point, provider as never, priority)
        }
        const label = order.map((registrations) => registrations[0]![0]).join(",")
        const winner = Option.getOrThrow(yield* registry.resolve("mascot"))
        assert.strictEqual(winner.provider, providers.alphaFirst, label)
        assert.strictEqual(Option.getOrThrow(yield* registry.resolve("startup-screen")).provider, providers.screenHigh)
        assert.deepStrictEqual(yield* registry.winners, [
          { point: "mascot", pluginId: "alpha", priority: 5, candidates: 4 },
          { point: "startup-screen", pluginId: "zeta", priority: 2, candidates: 2 }
        ])
        const diagnostics = yield* registry.diagnostics
        assert.deepStrictEqual(
          diagnostics.map(({ kind, point, pluginIds }) => ({ kind, point, pluginIds })),
          [{ kind: "extension_conflict", point: "mascot", pluginIds: ["alpha", "zeta"] }],
          label
        )
        assert.include(diagnostics[0]!.message, "alpha wins by plugin id")
        const drawn = yield* registry.renderStartup(terminal())
        assert.deepStrictEqual(drawn.lines, ["high"])
        assert.strictEqual(drawn.mascot, "alpha")
        assert.strictEqual(drawn.screen, "zeta")
      }
    })
  )

  it.effect("EX-2 ties below the winner or within one plugin are no conflict; unregistering hands the point on", () =>
    Effect.gen(function* () {
      const registry = yield* Extensions.make()
      yield* registry.register("top", "mascot", mascot("top"), 10)
      yield* registry.register("a", "mascot", mascot("a"), 3)
      yield* registry.register("b", "mascot", mascot("b"), 3)
      yield* registry.register("top", "mascot", mascot("top again"), 10)
      assert.deepStrictEqual(yield* registry.diagnostics, [])
      assert.strictEqual(Option.getOrThrow(yield* registry.resolve("mascot")).pluginId, "top")

      yield* registry.unregister("top")
      assert.strictEqual(Option.getOrThrow(yield* registry.resolve("mascot")).pluginId, "a")
      assert.deepStrictEqual(
        (yield* registry.diagnostics).map((diagnostic) => diagnostic.pluginIds),
        [["a", "b"]]
      )
      yield* registry.unregister("a")
      yield* registry.unregister("b")
      assert.isTrue(Option.isNone(yield* registry.resolve("mascot")))
      assert.deepStrictEqual(yield* registry.winners, [
        { point: "mascot", pluginId: undefined, priority: undefined, candidates: 0 },
        { point: "startup-screen", pluginId: undefined, priority: undefined, candidates: 0 }
      ])
    })
  )

  it.effect("EX-1 an unknown point, a bad priority or a provider without render is ignored with a diagnostic", () =>
    Effect.gen(function* () {
      const registry = yield* Extensions.make()
      yield* registry.register("odd", "banner" as never, mascot("x") as never, 1)
      yield* registry.register("odd", "mascot", mascot("nan"), Number.NaN)
      yield* registry.register("odd", "mascot", {} as never, 1)
      assert.isTrue(Option.isNone(yield* registry.resolve("mascot")))
      const diagnostics = yield* registry.diagnostics
      assert.deepStrictEqual(
        diagnostics.map((diagnostic) => diagnostic.kind),
        ["extension_invalid", "extension_invalid", "extension_invalid"]
      )
      assert.include(diagnostics[0]!.message, 'unknown extension point "banner"')
      yield* registry.unregister("odd")
      assert.deepStrictEqual(yield* registry.diagnostics, [])
    })
  )

  it.effect("EX-3 the default screen: name, version and hint; ASCII without unicode; colour only with colour", () =>
    Effect.gen(function* () {
      const registry = yield* Extensions.make({ version: "1.2.3" })
      const plain = yield* registry.renderStartup(terminal())
      assert.strictEqual(plain.mascot, "default")
      assert.strictEqual(plain.screen, "default")
      const text = plain.lines.join("\n")
      assert.include(text, "Alisio 1.2.3")
      assert.include(text, "/help")
      for (const line of plain.lines) assert.notMatch(line, NO_CONTROLS)

      const ascii = yield* registry.renderStartup(terminal({ unicode: false }))
      assert.match(ascii.lines.join("\n"), /^[\x20-\x7e\n]*$/)
      assert.include(ascii.lines.join("\n"), "Alisio 1.2.3")

      const coloured = yield* registry.renderStartup(terminal({ color: true }))
      assert.include(coloured.lines.join("\n"), "\u001b[1mAlisio\u001b[22m")
      const SGR = new RegExp(`${"\u001b"}\\[[0-9;]*m`, "g")
      assert.deepStrictEqual(
        coloured.lines.map((line) => line.replace(SGR, "")),
        plain.lines
      )
    })
  )

  it.effect("EX-3 a 40-column terminal: every line fits, wide characters count two, the height is cut", () =>
    Effect.gen(function* () {
      const narrow = terminal({ columns: 40, rows: 24 })
      const registry = yield* Extensions.make({ version: "0.1.0" })
      for (const unicode of [true, false]) {
        const drawn = yield* registry.renderStartup({ ...narrow, unicode })
        assert.isAbove(drawn.lines.length, 2)
        for (const line of drawn.lines) assert.isAtMost(columnsOf(line), 40, line)
      }
      const short = yield* registry.renderStartup({ ...narrow, rows: 2 })
      assert.strictEqual(short.lines.length, 2)

      yield* registry.register(
        "wide",
        "startup-screen",
        screen(() => Effect.succeed(["漢".repeat(30), `ab${"字".repeat(30)}`, "🙂".repeat(25), "x".repeat(100)]))
      )
      const wide = yield* registry.renderStartup(narrow)
      assert.deepStrictEqual(wide.lines, ["漢".repeat(20), `ab${"字".repeat(19)}`, "🙂".repeat(20), "x".repeat(40)])
      const odd = yield* registry.renderStartup({ ...narrow, columns: 39 })
      assert.strictEqual(odd.lines[0], "漢".repeat(19))
    })
  )

  it.effect("EX-3 a hostile provider's escape sequences, control characters and huge output are sanitized", () =>
    Effect.gen(function* () {
      const hostile = [
        "\u001b[31mred\u001b[0m \u001b[2J\u001b[H cleared",
        "\u001b]0;pwned title\u0007after-osc \u001b]8;;http://evil.example\u001b\\link\u001b]8;;\u001b\\",
        "\u001bP+q544e\u001b\\after-dcs \u009b31m8bit\u001b_apc\u001b\\ \u001bc reset",
        "bell\u0007 back\bspace car\rriage tab\there del\u007f \u202eevil-bidi\u202c",
        "multi\nline",
        "unterminated \u001b]52;c;c2VjcmV0",
        "y".repeat(100_000),
        ...Array.from({ length: 1000 }, (_, i) => `filler ${i}`)
      ]
      const registry = yield* Extensions.make()
      yield* registry.register("hostile", "mascot", mascot(...hostile))
      let seenMascot: ReadonlyArray<string> = []
      yield* registry.register(
        "hostile",
        "startup-screen",
        screen((_, drawnMascot) => {
          seenMascot = drawnMascot
          return Effect.succeed(hostile)
        })
      )
      const drawn = yield* registry.renderStartup(terminal({ columns: 60, rows: 10 }))
      assert.strictEqual(drawn.screen, "hostile")
      assert.deepStrictEqual(drawn.diagnostics, [])
      assert.strictEqual(drawn.lines.length, 10)
      for (const lines of [drawn.lines, seenMascot]) {
        for (const line of lines) {
          assert.notMatch(line, NO_CONTROLS, JSON.stringify(line))
          assert.isAtMost(columnsOf(line), 60)
        }
      }
      assert.deepStrictEqual(drawn.lines.slice(0, 9), [
        "red  cleared",
        "after-osc link",
        "after-dcs 8bit  reset",
        "bell backspace carriage tab here del evil-bidi",
        "multi",
        "line",
        "unterminated",
        "y".repeat(60),
        "filler 0"
      ])
    })
  )

  it.effect("EX-3 failing, dying, throwing or garbage-returning providers fall back to the defaults", () =>
    Effect.gen(function* () {
      const fallbacks: ReadonlyArray<readonly [string, MascotProvider]> = [
        ["fails", { render: () => Effect.fail("no") as never }],
        ["dies", { render: () => Effect.die(new Error("boom")) }],
        [
          "throws",
          {
            render: () => {
              throw new Error("sync boom")
            }
          }
        ],
        ["not-an-effect", { render: () => ["a promise, maybe"] as never }],
        ["not-an-array", { render: () => Effect.succeed("one string" as never) }],
        ["not-strings", { render: () => Effect.succeed([1, 2, 3] as never) }]
      ]
      const defaults = yield* (yield* Extensions.make()).renderStartup(terminal())
      for (const [name, provider] of fallbacks) {
        const registry = yield* Extensions.make()
        yield* registry.register(name, "mascot", provider)
        yield* registry.register(name, "startup-screen", { render: provider.render } as never)
        const drawn = yield* registry.renderStartup(terminal())
        assert.deepStrictEqual(drawn.lines, defaults.lines, name)
        assert.strictEqual(drawn.mascot, "default")
        assert.strictEqual(drawn.screen, "default")
        assert.deepStrictEqual(
          drawn.diagnostics.map(({ kind, point, pluginIds }) => ({ kind, point, pluginIds })),
          [
            { kind: "extension_failed", point: "mascot", pluginIds: [name] },
            { kind: "extension_failed", point: "startup-screen", pluginIds: [name] }
          ],
          name
        )
      }
    })
  )

  it.effect("EX-3 a provider that never answers (even uninterruptibly) falls back after the time bound", () =>
    Effect.gen(function* () {
      const registry = yield* Extensions.make({ renderTimeout: "300 millis" })
      yield* registry.register("silent", "mascot", { render: () => Effect.never })
      yield* registry.register("stubborn", "startup-screen", { render: () => Effect.uninterruptible(Effect.never) })
      const fiber = yield* Effect.fork(registry.renderStartup(terminal()))
      yield* TestClock.adjust("299 millis")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("1 millis")
      yield* TestClock.adjust("300 millis")
      const drawn = yield* Fiber.join(fiber)
      assert.strictEqual(drawn.mascot, "default")
      assert.strictEqual(drawn.screen, "default")
      assert.include(drawn.lines.join("\n"), "Alisio")
      assert.deepStrictEqual(
        drawn.diagnostics.map((diagnostic) => diagnostic.message),
        [
          'Plugin silent: the "mascot" provider gave no answer within 300ms; the default is shown instead.',
          'Plugin stubborn: the "startup-screen" provider gave no answer within 300ms; the default is shown instead.'
        ]
      )
    })
  )

  it.effect("EX-3 a plugin mascot is sanitized and framed by the default screen", () =>
    Effect.gen(function* () {
      const registry = yield* Extensions.make({ version: "0.1.0" })
      yield* registry.register("cat", "mascot", mascot("=^.^=", "\u001b[31m(cat)\u001b[0m"), 1)
      const drawn = yield* registry.renderStartup(terminal({ color: true }))
      assert.strictEqual(drawn.mascot, "cat")
      assert.strictEqual(drawn.screen, "default")
      assert.include(drawn.lines[0]!, "=^.^=")
      assert.include(drawn.lines.join("\n"), "(cat)")
      assert.notInclude(drawn.lines.join("\n"), "\u001b[31m")
    })
  )
})
