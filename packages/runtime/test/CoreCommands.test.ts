import * as path from "node:path"
import { CommandError, type CommandOutput } from "@alisio/domain/Command"
import type { SessionId } from "@alisio/domain/Ids"
import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Fake from "@alisio/providers/FakeProvider"
import { CommandCatalog, sessionSettings } from "@alisio/runtime/CommandCatalog"
import { Compaction, CompactionError } from "@alisio/runtime/Compaction"
import * as Providers from "@alisio/runtime/Providers"
import { Runner } from "@alisio/runtime/Runner"
import { SessionStore } from "@alisio/runtime/SessionStore"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { catalogLayer, contextOptions, foldersIn, write } from "./helpers/catalog.js"
import { echoTool } from "./helpers/harness.js"
import { echo, registering } from "./helpers/plugins.js"
import { tempDir } from "./helpers/tempDir.js"

const textOf = (output: CommandOutput): string => {
  assert.strictEqual(output._tag, "Text")
  return output._tag === "Text" ? output.text : ""
}

const failure = <A>(effect: Effect.Effect<A, CommandError>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.isTrue(Schema.is(CommandError)(error))
    return error
  })

/** Two runs in one session: one calling a tool (two turns), one answering at once. */
const script: Fake.Script = [
  Fake.callTools({ id: "c1", name: "echo", args: { text: "x" } }),
  Fake.answer("first", { inputTokens: 100, outputTokens: 20 }),
  Fake.answer("second", { inputTokens: 300, outputTokens: 40 })
]

const withCatalog = <A, E>(
  body: (folders: ReturnType<typeof foldersIn>) => Effect.Effect<A, E, CommandCatalog | Runner | SessionStore>,
  options: {
    readonly extra?: Layer.Layer<never> | undefined
    /** Replaces the runtime's Compaction service; `"none"` takes it away. */
    readonly compaction?: Layer.Layer<Compaction> | "none"
  } = {}
) =>
  Effect.gen(function* () {
    const folders = foldersIn(yield* tempDir)
    const layer = catalogLayer({
      context: contextOptions(folders),
      script,
      tools: [echoTool],
      host: { plugins: [registering("weather", echo("forecast"))] },
      catalog: { defaultModel: "fake/fake-model" }
    }).pipe(
      Layer.provideMerge(
        Layer.effectDiscard(
          Effect.flatMap(Providers.Providers, (providers) =>
            Effect.flatMap(
              Fake.make([], {
                models: [
                  { id: "fake-model", provider: "fake" },
                  { id: "big-model", provider: "fake" }
                ]
              }),
              ({ model }) => providers.register("fake", model)
            )
          )
        ).pipe(Layer.provideMerge(Providers.layerMemory))
      )
    )
    const compaction = options.compaction
    const withCompaction =
      compaction === undefined
        ? body(folders)
        : compaction === "none"
          ? Effect.mapInputContext(
              body(folders),
              (context: Context.Context<CommandCatalog | Runner | SessionStore>) =>
                Context.omit(Compaction)(context) as Context.Context<CommandCatalog | Runner | SessionStore>
            )
          : Effect.provide(body(folders), compaction)
    return yield* Effect.provide(withCompaction, layer)
  })

/** A session with two runs in `cwd`. */
const twoRuns = (cwd: string) =>
  Effect.gen(function* () {
    const runner = yield* Runner
    const first = yield* runner.run({ cwd, prompt: "first task", model: "fake-model", title: "Fix the parser" })
    yield* runner.run({ cwd, prompt: "second task", model: "fake-model", sessionId: first.sessionId })
    return first.sessionId
  })

describe("core commands", () => {
  it.scoped("CMD-2 /stats: the session's runs, turns, tokens, tool calls and messages, from the store", () =>
    withCatalog((folders) =>
      Effect.gen(function* () {
        const sessionId = yield* twoRuns(folders.workspace)
        const text = textOf(yield* (yield* CommandCatalog).execute("stats", "", { sessionId }))
        const lines = text.split("\n")
        assert.strictEqual(lines[0], `Session ${sessionId.slice(0, 8)} "Fix the parser"`)
        assert.include(lines, "  runs:       2 (2 completed)")
        assert.include(lines, "  turns:      3")
        assert.include(lines, "  tokens:     410 in, 65 out")
        assert.include(lines, "  tool calls: 1")
        assert.include(lines, "  messages:   6")
        assert.include(lines, "  model:      fake/fake-model (last run)")
        assert.match(text, /^ {2}time: {7}\S+ in runs; started just now, last active just now$/m)
      })
    )
  )

  it.scoped(
    "CMD-2 a command acting on a session needs one, with the remedy of the surface asking, and names the session it cannot find",
    () =>
      withCatalog(() =>
        Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const none = yield* failure(catalog.execute("stats", ""))
          assert.deepInclude(none, { reason: "usage", command: "stats" })
          assert.strictEqual(
            none.message,
            "/stats acts on a session, and there is none yet (in `alisio run`, give -s <id> or -c)."
          )
          const inTheUi = yield* failure(catalog.execute("stats", "", { surface: "tui" }))
          assert.strictEqual(
            inTheUi.message,
            "/stats acts on a session, and there is none yet (send a message to start one, or /resume one)."
          )
          const unknown = yield* failure(catalog.execute("effort", "high", { sessionId: "no-such-session" }))
          assert.deepInclude(unknown, { reason: "usage", message: "No session no-such-session; /sessions lists them." })
        })
      )
  )

  it.scoped(
    "CMD-2 /model and /effort: shown, set (the model checked against the providers), kept in the store, reset with default",
    () =>
      withCatalog((folders) =>
        Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const store = yield* SessionStore
          assert.strictEqual(
            textOf(yield* catalog.execute("model", "")),
            "No session yet; new sessions run with fake/fake-model (the default model)."
          )
          const sessionId = yield* twoRuns(folders.workspace)
          const short = sessionId.slice(0, 8)
          const run = (name: string, args: string) => catalog.execute(name, args, { sessionId })
          assert.strictEqual(
            textOf(yield* run("model", "")),
            `Session ${short} runs with fake/fake-model (its last run's).`
          )
          assert.strictEqual(
            textOf(yield* run("model", "fake/big-model")),
            `Session ${short} now runs with fake/big-model.`
          )
          assert.strictEqual(
            textOf(yield* run("model", "")),
            `Session ${short} runs with fake/big-model (set with /model).`
          )
          const unknown = yield* failure(run("model", "fake/tiny-model"))
          assert.strictEqual(unknown.reason, "usage")
          assert.include(unknown.message, 'provider "fake" has no model "tiny-model"')
          assert.strictEqual(
            textOf(yield* run("effort", "")),
            `Session ${short} uses the model's default reasoning effort.`
          )
          assert.strictEqual(
            textOf(yield* run("effort", "HIGH")),
            `Session ${short} now runs with reasoning effort high.`
          )
          assert.strictEqual(
            (yield* failure(run("effort", "extreme"))).message,
            '"extreme" is not an effort: give minimal, low, medium, high or default.'
          )
          assert.deepStrictEqual(yield* sessionSettings(store, sessionId as SessionId), {
            model: "fake/big-model",
            effort: "high"
          })
          yield* run("model", "default")
          yield* run("effort", "default")
          assert.deepStrictEqual(yield* sessionSettings(store, sessionId as SessionId), {})
        })
      )
  )

  it.scoped(
    "CMD-2 /sessions lists this workspace's sessions (the current one marked); /resume and /new switch sessions; CH-4 /resume of a child session names its root",
    () =>
      withCatalog((folders) =>
        Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const sessionId = yield* twoRuns(folders.workspace)
          const other = yield* (yield* Runner)
            .run({ cwd: folders.workspace, prompt: "other", model: "fake-model" })
            .pipe(Effect.catchAll(() => Effect.succeed(undefined)))
          const listed = textOf(yield* catalog.execute("sessions", "", { sessionId, cwd: folders.workspace })).split(
            "\n"
          )
          assert.strictEqual(listed[0], `Sessions in ${folders.workspace}:`)
          assert.match(
            listed.find((line) => line.includes(sessionId.slice(0, 8)))!,
            /^\* +\S{8} +just now +2 runs +Fix the parser$/
          )
          assert.strictEqual(listed.length, other === undefined ? 2 : 3)
          assert.deepStrictEqual(yield* catalog.execute("resume", sessionId.slice(0, 6)), {
            _tag: "Switch",
            sessionId,
            text: `Resumed session ${sessionId.slice(0, 8)} "Fix the parser".`
          })
          assert.strictEqual((yield* failure(catalog.execute("resume", ""))).reason, "usage")
          const store = yield* SessionStore
          const child = yield* store.createSession({
            parentId: sessionId,
            title: "explore: look",
            cwd: folders.workspace
          })
          const grandchild = yield* store.createSession({ parentId: child.id, cwd: folders.workspace })
          const refused = yield* failure(catalog.execute("resume", grandchild.id))
          assert.deepInclude(refused, {
            reason: "usage",
            message:
              `Session ${grandchild.id.slice(0, 8)} is a subagent's session inside session ${sessionId.slice(0, 8)}; ` +
              `it runs only as that session's task. Go on with ${sessionId.slice(0, 8)}: ` +
              `\`alisio -s ${sessionId.slice(0, 8)}\` (\`alisio sessions show ${grandchild.id.slice(0, 8)}\` shows what it did).`
          })
          assert.deepStrictEqual(yield* catalog.execute("new", "", { sessionId }), {
            _tag: "Switch",
            text: "A new session starts with the next prompt."
          })
          assert.strictEqual(
            textOf(yield* catalog.execute("sessions", "", { cwd: path.join(folders.workspace, "elsewhere") })),
            `No sessions in ${path.join(folders.workspace, "elsewhere")} yet.`
          )
        })
      )
  )

  it.scoped("CMD-2 CLI-3 words after a command that takes none, or after /resume's id, are refused, not dropped", () =>
    withCatalog((folders) =>
      Effect.gen(function* () {
        const catalog = yield* CommandCatalog
        const sessionId = yield* twoRuns(folders.workspace)
        for (const name of ["clear", "new", "sessions", "stats", "tools"]) {
          const refused = yield* failure(catalog.execute(name, "  all of it ", { sessionId }))
          assert.deepInclude(refused, {
            reason: "usage",
            message: `/${name} takes no arguments ("all of it" was given); type /${name} alone.`
          })
        }
        const resumed = yield* failure(catalog.execute("resume", `${sessionId.slice(0, 6)} please`))
        assert.deepInclude(resumed, {
          reason: "usage",
          message: `/resume takes one session id, not "${sessionId.slice(0, 6)} please": /resume <id>.`
        })
      })
    )
  )

  it.scoped(
    "CMD-2 /tools lists every tool with its effect and origin; /plugins what each plugin registered; /skills the skills",
    () =>
      withCatalog(() =>
        Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const tools = textOf(yield* catalog.execute("tools", "")).split("\n")
          assert.match(tools.find((line) => line.includes("forecast"))!, /^ {2}forecast +read +builtin plugin weather$/)
          assert.match(tools.find((line) => line.includes(echoTool.name))!, /^ {2}echo +read +core$/)
          const plugins = textOf(yield* catalog.execute("plugins", ""))
          assert.include(plugins, "weather 0.1.0  (builtin)  loaded\n  tools: forecast")
          assert.include(textOf(yield* catalog.execute("skills", "")), "No skills.")
        })
      )
  )

  it.scoped(
    "CMD-2 an escape sequence in a skill's front matter (YAML's \\e) or folder name reaches neither /skills nor any listing",
    () =>
      Effect.gen(function* () {
        const folders = foldersIn(yield* tempDir)
        write(
          path.join(folders.config, "skills", "sneaky", "SKILL.md"),
          '---\ndescription: "\\e[2J\\e]52;c;ZXZpbA==\\aClears \\e[31mthe screen"\n---\nDo it.\n'
        )
        // A folder's name is shown as its path: a cloned repository can name one with an escape.
        write(
          path.join(folders.config, "skills", "\u001b]0;owned\u0007named", "SKILL.md"),
          "---\nname: named\ndescription: Named\n---\nDo it.\n"
        )
        write(
          path.join(folders.config, "prompts", "tidy.md"),
          '---\ndescription: "Tidy \\e]0;title\\a"\nargument-hint: "\\e[1m<file>"\n---\nTidy.\n'
        )
        yield* Effect.gen(function* () {
          const catalog = yield* CommandCatalog
          const skills = textOf(yield* catalog.execute("skills", ""))
          assert.include(skills, "Clears the screen")
          for (const control of ["\u001b", "\u0007"]) assert.notInclude(skills, control)
          assert.deepInclude(yield* catalog.resolve("skill:sneaky"), { description: "Clears the screen" })
          assert.deepInclude(yield* catalog.resolve("tidy"), { description: "Tidy", argumentHint: "<file>" })
        }).pipe(Effect.provide(catalogLayer({ context: contextOptions(folders) })))
      })
  )

  it.scoped(
    "CMD-2 /compact calls the Compaction service when there is one, with the focus, and says so when there is none",
    () =>
      Effect.gen(function* () {
        const calls = yield* Ref.make<ReadonlyArray<unknown>>([])
        const compaction = Layer.succeed(Compaction, {
          compact: (sessionId, options) =>
            Effect.zipRight(
              Ref.update(calls, (all) => [...all, [sessionId, options?.focus]]),
              options?.focus === "fail"
                ? Effect.fail(new CompactionError({ sessionId, message: "The model could not summarise." }))
                : Effect.succeed({ tokensBefore: 12000, tokensAfter: 3000, messagesCompacted: 40 })
            )
        })
        yield* withCatalog(
          (folders) =>
            Effect.gen(function* () {
              const catalog = yield* CommandCatalog
              const sessionId = yield* twoRuns(folders.workspace)
              assert.strictEqual(
                textOf(yield* catalog.execute("compact", "the parser", { sessionId })),
                `Session ${sessionId.slice(0, 8)}: 40 messages summarised; the history went from about 12 000 to 3 000 tokens.`
              )
              const failed = yield* failure(catalog.execute("compact", "fail", { sessionId }))
              assert.deepInclude(failed, { reason: "failed", message: "The model could not summarise." })
              assert.deepStrictEqual(yield* Ref.get(calls), [
                [sessionId, "the parser"],
                [sessionId, "fail"]
              ])
            }),
          { compaction }
        )
        yield* withCatalog(
          (folders) =>
            Effect.gen(function* () {
              const sessionId = yield* twoRuns(folders.workspace)
              const missing = yield* failure((yield* CommandCatalog).execute("compact", "", { sessionId }))
              assert.deepInclude(missing, {
                reason: "unavailable",
                message: "Compaction is not available in this build of Alisio."
              })
            }),
          { compaction: "none" }
        )
      })
  )

  it.scoped("CTX-2 /context lists each part of the system context with its size and source", () =>
    Effect.gen(function* () {
      const folders = foldersIn(yield* tempDir)
      write(path.join(folders.workspace, "AGENTS.md"), "x".repeat(2048))
      write(path.join(folders.workspace, ".alisio", "prompts", "p.md"), "untrusted")
      const weather = definePlugin({
        id: "weather",
        version: "1.0.0",
        setup: Effect.flatMap(PluginApi, (api) => api.context.provide(() => Effect.succeed("Sunny.")))
      })
      const text = yield* Effect.flatMap(CommandCatalog, (catalog) => catalog.execute("context", "")).pipe(
        Effect.map(textOf),
        Effect.provide(catalogLayer({ context: contextOptions(folders), host: { plugins: [weather] } }))
      )
      const lines = text.split("\n")
      assert.match(
        lines[0]!,
        new RegExp(`^The system context of a run in ${folders.workspace}: 2\\.\\d KiB in all\\.$`)
      )
      assert.match(lines[1]!, /^ {2}base +\d+ B +Alisio's base prompt +built in$/)
      assert.match(
        lines[2]!,
        new RegExp(`^ {2}instructions +2\\.0 KiB +${path.join(folders.workspace, "AGENTS.md")} +project$`)
      )
      assert.match(lines[3]!, /^ {2}plugin +6 B +plugin weather +a context provider$/)
      assert.include(text, "then AGENTS.md (or CLAUDE.md) of each folder from the workspace (not in a git repository)")
      assert.include(
        text,
        `Not read (the project is not trusted; --trust-project reads them): ${path.join(folders.workspace, ".alisio", "prompts")}`
      )
    })
  )
})
