// The Interaction of `alisio run`: no person, approvals by policy (`--yes` or not). `--yes` also
// approves access outside the workspace, and each path it let through is named on stderr: the
// root run's by the renderer, from the run's events; a subagent's here, since its events are its
// own run's and never reach the renderer (TL-3, CH-1).
import * as Interaction from "@alisio/runtime/Interaction"
import { terminalSafe } from "@alisio/runtime/TerminalText"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** One line for the path `--yes` let a subagent reach, never an escape sequence. */
export const subagentApprovalLine = (path: string, label: string): string =>
  `alisio: --yes approved access outside the workspace: ${terminalSafe(path)} (subagent ${terminalSafe(label)})`

export const layer = (policy: { readonly approveAll: boolean }): Layer.Layer<Interaction.Interaction> =>
  Layer.effect(
    Interaction.Interaction,
    Effect.gen(function* () {
      const headless = yield* Effect.provide(Interaction.Interaction, Interaction.layerHeadless(policy))
      const named = new Set<string>()
      return Interaction.Interaction.of({
        ...headless,
        approve: (request) =>
          Effect.tap(headless.approve(request), (answer) => {
            const { kind, label, path } = request
            if (!answer.approved || kind !== "external_directory" || label === undefined || path === undefined) return
            if (named.has(path)) return
            named.add(path)
            return Effect.sync(() => void process.stderr.write(`${subagentApprovalLine(path, label)}\n`))
          })
      })
    })
  )
