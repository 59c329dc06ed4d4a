// Context windows learned from a provider's refusal, kept between runs (CTX-1): the real runner,
// the FakeProvider, SQLite, and the cache file in a temp folder.

import * as fs from "node:fs"
import * as path from "node:path"
import { ProviderError } from "@alisio/domain/Errors"
import { LanguageModel } from "@alisio/domain/LanguageModel"
import * as Fake from "@alisio/providers/FakeProvider"
import * as WindowCache from "@alisio/runtime/WindowCache"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { seeded } from "./helpers/compaction.js"
import { assertContract, baseOptions, collect, ofType, runnerLayer } from "./helpers/harness.js"
import { tempDir } from "./helpers/tempDir.js"

const refusal = new ProviderError({
  code: "context_length_exceeded",
  message: "the request exceeds the available context size (n_ctx 3000)",
  status: 400,
  contextWindow: 3_000
})

const summary = (text: string): Fake.Response => [...Fake.text(text), Fake.finish("stop")]

describe("CTX-1 learned context windows", () => {
  it.scoped(
    "CTX-1 the window a refusal named is kept: the next run compacts at its threshold, not after a refusal",
    () =>
      Effect.gen(function* () {
        const file = path.join(yield* tempDir, "windows", "openai.json")
        const fake = yield* LanguageModel
        const provider = { ...fake, learnedWindows: WindowCache.make(file) }

        const first = yield* seeded(["a".repeat(8_000)])
        const refused = yield* collect({
          ...baseOptions,
          provider,
          sessionId: first.sessionId,
          prompt: "go on",
          tools: []
        })
        assert.strictEqual(ofType(refused, "compaction_started")[0]!.data.reason, "context_length_exceeded")
        assert.isTrue(fs.existsSync(file))

        const second = yield* seeded(["b".repeat(8_000)])
        const events = yield* collect({
          ...baseOptions,
          provider,
          sessionId: second.sessionId,
          prompt: "and",
          tools: []
        })
        assertContract(events)
        const started = ofType(events, "compaction_started")[0]!.data
        assert.deepStrictEqual(
          [started.reason, started.contextWindow, started.source],
          ["threshold", 3_000, "provider"]
        )
        assert.strictEqual(ofType(events, "run_completed").length, 1)
        const requests = yield* Effect.flatMap(Fake.FakeProvider, (provider) => provider.requests)
        // First run: refused, summary, answer; second: summary, answer, with no refusal between.
        assert.strictEqual(requests.length, 5)
      }).pipe(
        Effect.provide(
          runnerLayer({
            script: [
              [Fake.fail(refusal)],
              summary("The person asked for a's."),
              Fake.answer("fine"),
              summary("The person asked for b's."),
              Fake.answer("done")
            ]
          })
        )
      )
  )

  it.scoped("CTX-1 a learned window is trusted for an hour, per model; a damaged file is no window", () =>
    Effect.gen(function* () {
      const file = path.join(yield* tempDir, "windows.json")
      const windows = WindowCache.make(file)
      yield* windows.write("small", 4_096)
      yield* TestClock.adjust("30 minutes")
      yield* windows.write("other", 8_192)
      assert.deepStrictEqual(
        [yield* windows.read("small"), yield* windows.read("other"), yield* windows.read("unknown")],
        [4_096, 8_192, undefined]
      )
      yield* TestClock.adjust("31 minutes")
      assert.deepStrictEqual([yield* windows.read("small"), yield* windows.read("other")], [undefined, 8_192])
      fs.writeFileSync(file, "{ not json")
      assert.strictEqual(yield* windows.read("other"), undefined)
      yield* windows.write("other", 2_048)
      assert.strictEqual(yield* windows.read("other"), 2_048)
    })
  )
})
