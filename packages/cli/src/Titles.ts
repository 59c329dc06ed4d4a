import { isIP } from "node:net"
import type { SessionId } from "@alisio/domain/Ids"
import * as OpenAiCompatible from "@alisio/providers/OpenAiCompatible"
import * as Providers from "@alisio/runtime/Providers"
import { SessionStore } from "@alisio/runtime/SessionStore"
import * as SessionTitles from "@alisio/runtime/SessionTitles"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { nonEmpty, type Setup } from "./App.js"

/** How long the title request may take, and how long a finished run waits for it before exiting. */
export const TITLE_WITHIN = "20 seconds"
export const TITLE_GRACE = "1 second"

const privateV4 = (address: string) => {
  const [a = 0, b = 0] = address.split(".").map(Number)
  return (
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254)
  )
}

/** Whether a base URL names this machine or a private network: a server that is not cheap to ask twice. */
export const isLocalServer = (baseURL: string): boolean => {
  let host: string
  try {
    host = new URL(baseURL).hostname.replace(/^\[|\]$/g, "").toLowerCase()
  } catch {
    return false
  }
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local")) return true
  if (isIP(host) === 4) return privateV4(host)
  if (isIP(host) === 6) return host === "::1" || host === "::" || /^f[cd]/.test(host) || host.startsWith("fe80:")
  return false
}

const baseUrlOf = (setup: Setup, providerId: string): string =>
  (providerId === "openai" ? nonEmpty(process.env.OPENAI_BASE_URL) : undefined) ??
  setup.config.providers?.[providerId]?.baseURL ??
  OpenAiCompatible.defaultBaseURL

/** Whether new sessions get a title from the model: `titles.summarize`, else only for remote providers. */
export const summarizes = (setup: Setup, providerId: string): boolean =>
  setup.config.titles?.summarize ?? !isLocalServer(baseUrlOf(setup, providerId))

/**
 * Asks for a one-line title of `prompt` beside the run and stores it on the session once the run
 * has made it, unless the title changed meanwhile. Never fails: a title is a nicety.
 */
export const summarizeInto = (options: {
  readonly setup: Setup
  readonly run: Providers.ResolvedModel
  readonly prompt: string
  readonly promptTitle: string
  readonly session: Deferred.Deferred<SessionId>
}) =>
  Effect.gen(function* () {
    const providers = yield* Providers.Providers
    const configured = options.setup.config.titles?.model
    const model =
      configured === undefined
        ? options.run
        : yield* Effect.orElseSucceed(providers.resolve(configured), () => options.run)
    const title = yield* SessionTitles.summarize({
      provider: model.service,
      model: model.model,
      prompt: options.prompt,
      within: TITLE_WITHIN
    })
    if (Option.isNone(title) || title.value === options.promptTitle) return
    const sessionId = yield* Deferred.await(options.session)
    const store = yield* SessionStore
    yield* store.renameSession(sessionId, title.value, { whileTitle: options.promptTitle })
  }).pipe(Effect.catchAllCause(() => Effect.void))
