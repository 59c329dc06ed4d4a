// What `api.sessions` offers beyond spawn/await/abort/list (CH-1, CH-4): a child's system prompt,
// workspace, label, excluded tools and per-effect approvals; `status`, `awaitWithin`, `toolCalls`;
// notices between turns; a `provider/model`; no spawn into a run that is ending.
import * as fs from "node:fs"
import * as path from "node:path"
import { ChildSessionLimitError } from "@alisio/domain/ChildSession"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { resolveLimits } from "@alisio/domain/Limits"
import { definePlugin, PluginApi, type PluginApiService } from "@alisio/domain/Plugin"
import type { KnownRunEvent } from "@alisio/domain/RunEvent"
import { defineTool, type ToolContext, textResult } from "@alisio/domain/Tool"
import * as Fake from "@alisio/providers/FakeProvider"
import * as ChildSessions from "@alisio/runtime/ChildSessions"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import * as ProjectInstructions from "@alisio/runtime/ProjectInstructions"
import * as Providers from "@alisio/runtime/Providers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { defaultApprovals } from "@alisio/runtime/Tools"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { promptOf } from "./helpers/delegate.js"
import { runnerLayer } from "./helpers/harness.js"
import { hostLayer } from "./helpers/plugins.js"
import { tempDir } from "./helpers/tempDir.js"

type Body = (api: PluginApiService, context: ToolContext) => Effect.Effect<string, unknown>

/** A plugin whose tool `probe` runs what the test gives it. */
const probing = (body: Body) =>
  definePlugin({
    id: "probe",
    version: "1.0.0",
    setup: Effect.gen(function* () {
      const api = yield* PluginApi
      yield* api.tools.register(
        defineTool({
          name: "probe",
          description: "Runs the test's body.",
          effect: "internal",
          input: Schema.Struct({}),
          run: (_, context) => Effect.map(body(api, context), (text) => textResult(text))
        })
      )
    })
  })

const answered = (request: ModelRequest) => request.messages.at(-1)?.role === "tool"

/** The root calls `probe` once, then answers; children answer their prompt back. */
const rootProbes: Fake.Script = (request) =>
  promptOf(request) !== "root"
    ? [Fake.delay(1_000), ...Fake.answer(`did ${promptOf(request)}`)]
    : answered(request)
      ? Fake.answer("root done")
      : Fake.callTools({ id: "p1", name: "probe", args: {} })

/** The host over the runtime with the test tools (echo, note, sleep…) and the probe plugin. */
const layerWith = (body: Body, script: Fake.Script = rootProbes) =>
  PluginHost.layer({ plugins: [probing(body)] }).pipe(
    Layer.provideMerge(PluginUi.layerMemory),
    Layer.provideMerge(runnerLayer({ script }))
  )

/**
 * Moves the TestClock on, `step` at a time, until `fiber` ends: a run does real I/O (files, the
 * database) before its child sleeps, so a single early `adjust` could pass before the sleep began.
 */
const driveUntilDone = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, step: number) =>
  Effect.gen(function* () {
    while (Option.isNone(yield* Fiber.poll(fiber))) {
      yield* TestClock.adjust(step)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
    return yield* Fiber.join(fiber)
  })

const run = (cwd = "/tmp", prompt = "root") =>
  Effect.flatMap(Runner, (runner) => runner.run({ cwd, prompt, model: "fake-model" }))

const probeResult = (sessionId: string) =>
  Effect.map(
    Effect.flatMap(SessionStore, (store) => store.toolCalls(sessionId as never)),
    (calls) => calls.find((c) => c.name === "probe")?.result
  )

describe("api.sessions", () => {
  it.scoped("CH-1 a child gets its system prompt, a workspace below the parent's, a label, and fewer tools", () => {
    let sub = ""
    return Effect.gen(function* () {
      const cwd = yield* tempDir
      sub = path.join(cwd, "sub")
      fs.mkdirSync(sub)
      const outcome = yield* driveUntilDone(yield* Effect.fork(run(cwd)), 1_000)
      assert.strictEqual(yield* probeResult(outcome.sessionId), "did child work")
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (f) => f.requests)
      const child = requests.find((r) => promptOf(r) === "child work")!
      assert.strictEqual(child.system, "You are a helper.")
      assert.deepStrictEqual(child.tools.map((t) => t.name).sort(), ["echo", "probe"])
      const store = yield* SessionStore
      const [row] = yield* store.sessions({ parentId: outcome.sessionId })
      assert.strictEqual(row!.cwd, sub)
      const started = (yield* store.events(outcome.sessionId)).find((e) => e.type === "child_session_started")
      assert.strictEqual(started?.type === "child_session_started" ? started.data.label : undefined, "helper")
    }).pipe(
      Effect.provide(
        layerWith((api) =>
          Effect.flatMap(
            api.sessions.spawn({
              prompt: "child work",
              system: "You are a helper.",
              cwd: sub,
              label: "helper",
              tools: ["echo", "note", "probe", "sleep"],
              excludeTools: ["note", "sleep"]
            }),
            (child) => Effect.map(api.sessions.await(child), (o) => o.text)
          )
        )
      )
    )
  })

  it.scoped("CTX-2 a child's system prompt is followed by its workspace's AGENTS.md, unless it asks for none", () => {
    let sub = ""
    return Effect.gen(function* () {
      const cwd = yield* tempDir
      sub = path.join(cwd, "sub")
      fs.mkdirSync(sub)
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "Root rules.\n")
      fs.writeFileSync(path.join(sub, "AGENTS.md"), "Sub rules.\n")
      fs.mkdirSync(path.join(cwd, ".git"))
      yield* driveUntilDone(yield* Effect.fork(run(cwd)), 1_000)
      const requests = yield* Effect.flatMap(Fake.FakeProvider, (f) => f.requests)
      const withRules = requests.find((r) => promptOf(r) === "with rules")!.system ?? ""
      assert.match(withRules, /^You are a helper\.\n\n# Instructions\n/)
      const root = withRules.indexOf(`## ${path.join(fs.realpathSync(cwd), "AGENTS.md")}\nRoot rules.`)
      const nested = withRules.indexOf(`## ${path.join(fs.realpathSync(sub), "AGENTS.md")}\nSub rules.`)
      assert.isTrue(root > 0 && nested > root, withRules)
      assert.strictEqual(requests.find((r) => promptOf(r) === "without rules")!.system, "You are a helper.")
    }).pipe(
      Effect.provide(
        layerWith((api) =>
          Effect.gen(function* () {
            const children = [
              yield* api.sessions.spawn({ prompt: "with rules", system: "You are a helper.", cwd: sub }),
              yield* api.sessions.spawn({
                prompt: "without rules",
                system: "You are a helper.",
                cwd: sub,
                instructions: false
              })
            ]
            yield* Effect.forEach(children, (child) => api.sessions.await(child))
            return "spawned"
          })
        ).pipe(Layer.provide(ProjectInstructions.layer({ configHome: "/nonexistent-alisio-config" })))
      )
    )
  })

  it.scoped("CH-1 a plugin's child may not work outside the parent's workspace nor the plugin's own folders", () =>
    Effect.gen(function* () {
      const outcome = yield* run(yield* tempDir)
      assert.strictEqual(
        yield* probeResult(outcome.sessionId),
        "PluginError: A child session cannot work in /: it is neither inside the parent's workspace nor inside the plugin's own folders."
      )
    }).pipe(
      Effect.provide(
        layerWith((api) =>
          api.sessions.spawn({ prompt: "escape", cwd: "/" }).pipe(
            Effect.as("spawned"),
            Effect.catchAll((error) => Effect.succeed(`${error._tag}: ${error.message}`))
          )
        )
      )
    )
  )

  it("CH-1 approvals per effect narrow effect by effect, and what was asked beyond is reported", () => {
    const grant = ChildSessions.narrowPermissions(
      {
        toolNames: new Set(["echo"]),
        capabilities: new Set(),
        approvals: { ...defaultApprovals, external: "deny" },
        readOnly: false
      },
      { prompt: "x", approvals: { write: "approve", external: "ask", read: "deny" }, excludeTools: ["echo"] }
    )
    assert.deepStrictEqual(grant.approvals, { read: "deny", write: "ask", external: "deny", internal: "approve" })
    assert.deepStrictEqual(grant.narrowed, ["approvals.write:approve", "approvals.external:ask"])
    assert.deepStrictEqual(grant.tools, [])
  })

  it("CH-1 a child gets no more turns than its parent; the other limits it sets freely", () => {
    const parent = resolveLimits({ maxTurns: 10, timeoutMs: 60_000 })
    const more = ChildSessions.narrowLimits(parent, { maxTurns: 50, timeoutMs: 1_000, maxOutputTokens: 1_000 })
    assert.deepStrictEqual([more.maxTurns, more.timeoutMs, more.maxOutputTokens], [10, 1_000, 1_000])
    assert.strictEqual(ChildSessions.narrowLimits(parent, { maxTurns: 5 }).maxTurns, 5)
    assert.deepStrictEqual(ChildSessions.narrowLimits(parent, undefined), parent)
  })

  it.scoped(
    "CH-1 status answers without waiting, awaitWithin gives up after active time, toolCalls lists the journal",
    () => {
      const seen: Array<string> = []
      return Effect.gen(function* () {
        const outcome = yield* driveUntilDone(yield* Effect.fork(run()), 500)
        assert.strictEqual(outcome.status, "completed")
        assert.deepStrictEqual(seen, ["queued", "gave up", "completed", "echo:completed"])
      }).pipe(
        Effect.provide(
          layerWith(
            (api) =>
              Effect.gen(function* () {
                const child = yield* api.sessions.spawn({ prompt: "echo then answer" })
                seen.push((yield* api.sessions.status(child)).status)
                const early = yield* api.sessions.awaitWithin(child, 100)
                seen.push(Option.isNone(early) ? "gave up" : "early")
                const late = yield* api.sessions.awaitWithin(child, 60_000)
                seen.push(Option.match(late, { onNone: () => "none", onSome: (o) => o.status }))
                seen.push(...(yield* api.sessions.toolCalls(child)).map((c) => `${c.name}:${c.status}`))
                return "probed"
              }),
            (request) => {
              if (promptOf(request) === "root") {
                return answered(request)
                  ? Fake.answer("root done")
                  : Fake.callTools({ id: "p1", name: "probe", args: {} })
              }
              return answered(request)
                ? [Fake.delay(1_000), ...Fake.answer("child done")]
                : Fake.callTools({ id: "e1", name: "echo", args: { text: "x" } })
            }
          )
        )
      )
    }
  )

  it.scoped("CH-4 a notice reaches the next request as a stored user message; a run expecting one waits for it", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(run())
      yield* Effect.flatMap(Fake.FakeProvider, (fake) =>
        Effect.repeat(fake.requests, { until: (requests) => requests.length === 2 })
      )
      yield* TestClock.adjust(1_000)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome.text, "heard: later news")
      assert.strictEqual(outcome.turns, 3)
      const messages = (yield* Effect.flatMap(SessionStore, (s) => s.messages(outcome.sessionId))).map((m) => m.message)
      assert.deepStrictEqual(messages.at(-2), {
        role: "user",
        content: [{ _tag: "text", text: "[notice] later news" }]
      })
    }).pipe(
      Effect.provide(
        hostLayer(
          (request) => {
            const last = JSON.stringify(request.messages.at(-1))
            if (last.includes("[notice]")) return Fake.answer("heard: later news")
            return answered(request)
              ? Fake.answer("waiting for news")
              : Fake.callTools({ id: "p1", name: "probe", args: {} })
          },
          {
            plugins: [
              definePlugin({
                id: "probe",
                version: "1.0.0",
                setup: Effect.gen(function* () {
                  const api = yield* PluginApi
                  const scope = yield* Effect.scope
                  yield* api.tools.register(
                    defineTool({
                      name: "probe",
                      description: "Promises news and posts it a second later.",
                      effect: "internal",
                      input: Schema.Struct({}),
                      run: (_, context) =>
                        Effect.gen(function* () {
                          const promised = yield* Deferred.make<void>()
                          yield* Effect.forkIn(
                            Effect.scoped(
                              Effect.gen(function* () {
                                yield* api.sessions.expectNotice(context.sessionId)
                                yield* Deferred.succeed(promised, undefined)
                                yield* Effect.sleep(1_000)
                                yield* api.sessions.notify(context.sessionId, "later news")
                              })
                            ),
                            scope
                          )
                          yield* Deferred.await(promised)
                          return textResult("news will come")
                        })
                    })
                  )
                })
              })
            ]
          }
        )
      )
    )
  )

  it.scoped("CH-1 a child of `provider/model` runs on that provider; an unknown one is refused by name", () => {
    const results: Array<string> = []
    return Effect.gen(function* () {
      const other = yield* Fake.make(() => Fake.answer("from the other provider"), {
        provider: "other",
        models: [{ id: "m1", provider: "other" }]
      })
      yield* Effect.flatMap(Providers.Providers, (p) => p.register("other", other.model))
      const outcome = yield* run()
      assert.strictEqual(outcome.status, "completed")
      assert.deepStrictEqual(results[0], "from the other provider")
      assert.match(results[1]!, /^UnknownModelError: Unknown model "other\/nope"/)
      assert.strictEqual((yield* other.fake.requests)[0]?.model, "m1")
    }).pipe(
      Effect.provide(
        Layer.provideMerge(
          layerWith(
            (api) =>
              Effect.gen(function* () {
                const child = yield* api.sessions.spawn({ prompt: "elsewhere", model: "other/m1" })
                results.push((yield* api.sessions.await(child)).text)
                const refused = yield* Effect.either(api.sessions.spawn({ prompt: "x", model: "other/nope" }))
                results.push(refused._tag === "Left" ? `${refused.left._tag}: ${refused.left.message}` : "spawned")
                return "probed"
              }),
            (request) =>
              promptOf(request) !== "root"
                ? Fake.answer("wrong provider")
                : answered(request)
                  ? Fake.answer("root done")
                  : Fake.callTools({ id: "p1", name: "probe", args: {} })
          ),
          Providers.layerMemory
        )
      )
    )
  })

  it.scoped("CH-2 a spawn once the run has begun to end is refused, and the run's terminal event stays last", () => {
    const refused = Deferred.unsafeMake<ChildSessionLimitError | string>(FiberId.none)
    return Effect.gen(function* () {
      const outcome = yield* run()
      assert.strictEqual(outcome.status, "completed")
      const result = yield* Deferred.await(refused)
      assert.isTrue(Schema.is(ChildSessionLimitError)(result))
      assert.strictEqual((result as ChildSessionLimitError).limit, "ended")
      const events: ReadonlyArray<KnownRunEvent> = yield* Effect.flatMap(SessionStore, (s) =>
        s.events(outcome.sessionId)
      )
      assert.strictEqual(events.at(-1)?.type, "run_completed")
      assert.isFalse(events.some((e) => e.type === "child_session_started"))
    }).pipe(
      Effect.provide(
        hostLayer(
          (request) =>
            answered(request) ? Fake.answer("root done") : Fake.callTools({ id: "p1", name: "probe", args: {} }),
          {
            plugins: [
              definePlugin({
                id: "probe",
                version: "1.0.0",
                setup: Effect.gen(function* () {
                  const api = yield* PluginApi
                  const scope = yield* Effect.scope
                  const ended = yield* Deferred.make<void>()
                  yield* api.events.on("run_completed", () => Deferred.succeed(ended, undefined))
                  yield* api.tools.register(
                    defineTool({
                      name: "probe",
                      description: "Spawns a child once its run has ended.",
                      effect: "internal",
                      input: Schema.Struct({}),
                      run: () =>
                        Effect.as(
                          Effect.forkIn(
                            // The fork keeps the call's context: it spawns into the run, once ended.
                            Effect.gen(function* () {
                              yield* Deferred.await(ended)
                              const result = yield* Effect.either(api.sessions.spawn({ prompt: "too late" }))
                              yield* Deferred.succeed(
                                refused,
                                result._tag === "Left" ? (result.left as ChildSessionLimitError) : "spawned"
                              )
                            }),
                            scope
                          ),
                          textResult("forked")
                        )
                    })
                  )
                })
              })
            ]
          }
        )
      )
    )
  })
})
