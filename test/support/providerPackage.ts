// A dedicated provider package's entry (PRV-3), as docs/plugins.md shows it: a plugin that
// registers one provider, whose one model answers with the prompt reversed.
export const echoProviderSource = `import { definePlugin, PluginApi } from "@alisio/domain/Plugin"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const lastUserText = (messages) => {
  const last = messages.filter((message) => message.role === "user").at(-1)
  return last === undefined ? "" : last.content.filter((part) => part._tag === "text").map((part) => part.text).join("")
}

export default definePlugin({
  id: "echo",
  version: "1.2.0",
  description: "Answers with the prompt reversed",
  setup: Effect.gen(function* () {
    const api = yield* PluginApi
    yield* api.providers.register("echo", {
      provider: "echo",
      models: Effect.succeed([{ id: "reverse", provider: "echo", contextWindow: 8000 }]),
      stream: (request) =>
        Stream.make(
          { _tag: "TextDelta", text: [...lastUserText(request.messages)].reverse().join("") },
          { _tag: "Finish", reason: "stop" }
        )
    })
  })
})
`
