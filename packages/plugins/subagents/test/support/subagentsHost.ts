// The subagents plugin as Alisio runs it: the real runner and child sessions, the plugin host, the
// builtin tools, an in-memory (or file) session database and the scripted FakeProvider. Children
// are told apart in a script by their system prompt, which names their agent path.
import * as os from "node:os"
import * as path from "node:path"
import type { ModelRequest } from "@alisio/domain/LanguageModel"
import { makeSubagentsPlugin } from "@alisio/plugin-subagents"
import * as Fake from "@alisio/providers/FakeProvider"
import * as AgentRuntime from "@alisio/runtime/AgentRuntime"
import * as Interaction from "@alisio/runtime/Interaction"
import * as PluginHost from "@alisio/runtime/PluginHost"
import * as PluginUi from "@alisio/runtime/PluginUi"
import * as SessionStore from "@alisio/runtime/SessionStore"
import { builtinTools } from "@alisio/runtime/tools/BuiltinTools"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"

export { makeTempDir, tempDir } from "../../../../runtime/test/helpers/tempDir.js"

export interface HostOptions {
  readonly script: Fake.Script
  /** `builtinPlugins.subagents`. */
  readonly config?: Record<string, unknown> | undefined
  readonly interaction?: Layer.Layer<Interaction.Interaction> | undefined
  readonly store?: Layer.Layer<SessionStore.SessionStore, unknown> | undefined
  readonly homes?: PluginHost.PluginHomes | undefined
  /** Where `~/.claude/agents/` is read; a folder that does not exist by default. */
  readonly homeDir?: string | undefined
  readonly trustProject?: boolean | undefined
}

/** The builtin tools of a headless run. */
export const headlessTools = builtinTools().filter((tool) => tool.name !== "ask_user_question")

export const subagentsLayer = (options: HostOptions) =>
  PluginHost.layer({
    plugins: [
      {
        definition: makeSubagentsPlugin({
          homeDir: options.homeDir ?? path.join(os.tmpdir(), "alisio-subagents-no-home")
        }),
        config: options.config ?? {}
      }
    ],
    ...(options.homes === undefined ? {} : { homes: options.homes }),
    trustProject: options.trustProject ?? false
  }).pipe(
    Layer.provideMerge(PluginUi.layerMemory),
    Layer.provideMerge(
      AgentRuntime.layer({
        tools: headlessTools,
        interaction: options.interaction ?? Interaction.layerHeadless({ approveAll: true })
      })
    ),
    Layer.provideMerge(Fake.layer(options.script)),
    Layer.provideMerge(options.store ?? SessionStore.layerMemory)
  )

/** The agent path a request's system prompt names; `undefined` for the root. */
export const agentOf = (request: ModelRequest): string | undefined =>
  /You are the subagent "([^"]+)"/.exec(request.system ?? "")?.[1]

/** The text of the request's first user message (the task's prompt). */
export const promptOf = (request: ModelRequest): string => {
  const first = request.messages.find((m) => m.role === "user")
  return first?.role === "user" && first.content[0]?._tag === "text" ? first.content[0].text : ""
}

/** The text of the tool results since the last assistant message. */
export const latestResults = (request: ModelRequest): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!
    if (message.role !== "tool") break
    out.unshift(message.content.map((part) => (part._tag === "text" ? part.text : "")).join(""))
  }
  return out
}

/** Whether the last message is a tool result: the model has had its calls answered. */
export const answered = (request: ModelRequest) => request.messages.at(-1)?.role === "tool"

/** Every text of the request's messages, for searching. */
export const allText = (request: ModelRequest) => JSON.stringify(request.messages)

/** The task id a `<subagent_result>` or a background start names. */
export const taskIdIn = (text: string): string | undefined =>
  (/task="([0-9a-f]{8})"/.exec(text) ?? /as task ([0-9a-f]{8})/.exec(text))?.[1]

/**
 * Polls `effect` until `check` holds, giving other fibers and real I/O (files, git) time between
 * tries; dies after `ms` of real time. Not a timing assertion: it only waits for a state.
 */
export const waitUntil = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (value: A) => boolean, ms = 20_000) =>
  Effect.gen(function* () {
    const deadline = performance.now() + ms
    for (;;) {
      const value = yield* effect
      if (check(value)) return value
      if (performance.now() > deadline) return yield* Effect.dieMessage(`waitUntil: gave up after ${ms} ms`)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
    }
  })

/**
 * Polls `effect` like `waitUntil`, moving the TestClock `step` on before each try: a sleep that
 * begins a little after the state the test saw (real I/O first) still ends.
 */
export const advanceUntil = <A, E, R>(step: number, effect: Effect.Effect<A, E, R>, check: (value: A) => boolean) =>
  waitUntil(Effect.zipRight(TestClock.adjust(step), effect), check)

export const requestsOf = Effect.flatMap(Fake.FakeProvider, (fake) => fake.requests)
