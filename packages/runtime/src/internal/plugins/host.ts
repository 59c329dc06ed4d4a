// What the plugin host shares with every plugin's API: its services and registries, what each
// plugin registered, and how a plugin's diagnostic is recorded.

import type { CommandDescriptor, PluginCommand } from "@alisio/domain/Command"
import type { LanguageModelService } from "@alisio/domain/LanguageModel"
import type { ContextProvider } from "@alisio/domain/Plugin"
import type { PluginFailureStage } from "@alisio/domain/RunEvent"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Ref from "effect/Ref"
import type { ChildSessions } from "../../ChildSessions.js"
import type { CompactionHooksService } from "../../Compaction.js"
import type { ExtensionsService } from "../../Extensions.js"
import type { PluginDiagnostic } from "../../PluginHost.js"
import type { PluginUi } from "../../PluginUi.js"
import type { Providers } from "../../Providers.js"
import type { RunEvents } from "../../RunEvents.js"
import type { SessionStoreService } from "../../SessionStore.js"
import type { Tools } from "../../Tools.js"

/** The roots under which every plugin gets its own folders. */
export interface PluginHomes {
  readonly state: string
  readonly config: string
  readonly cache: string
}

export interface PluginTimeouts {
  /** How long `setup` may take. */
  readonly setupMs: number
  /** How long closing one plugin's scope may take when the host closes. */
  readonly closeMs: number
  /** How long one context provider may take at the start of a run. */
  readonly contextMs: number
  /** How long `api.model.complete` may take. */
  readonly completeMs: number
}

/** What a plugin registered, for `plugins list` and for its diagnostics. */
export interface PluginRecord {
  readonly id: string
  readonly builtin: boolean
  /** An external plugin's folder. */
  readonly root?: string | undefined
  readonly tools: Array<string>
  readonly commands: Array<string>
  readonly providers: Array<string>
  readonly diagnostics: Array<string>
}

export interface RegisteredCommand {
  readonly pluginId: string
  readonly descriptor: CommandDescriptor
  readonly command: PluginCommand
}

export interface RegisteredContext {
  readonly pluginId: string
  readonly provider: ContextProvider
}

/** The host's services and registries, shared by every plugin's API. */
export interface HostInternals {
  readonly tools: Tools["Type"]
  readonly events: RunEvents["Type"]
  readonly store: SessionStoreService
  readonly children: ChildSessions["Type"]
  readonly providers: Option.Option<Providers["Type"]>
  readonly fallbackModel: Option.Option<LanguageModelService>
  readonly ui: PluginUi["Type"]
  readonly homes: PluginHomes
  /** `--trust-project`: what `api.trustProject` says. */
  readonly trustProject: boolean
  readonly timeouts: PluginTimeouts
  /** `decisions.telemetry`: whether the decisions plugins report are stored (EV-6). */
  readonly decisionTelemetry: boolean
  readonly contexts: Ref.Ref<ReadonlyArray<RegisteredContext>>
  readonly commands: Ref.Ref<ReadonlyMap<string, RegisteredCommand>>
  readonly extensions: ExtensionsService
  /** The compaction hooks of the runtime (CTX-1), when it has them. */
  readonly compactionHooks: Option.Option<CompactionHooksService>
  readonly report: (diagnostic: PluginDiagnostic) => Effect.Effect<void>
}

/** Records a diagnostic for the plugin and shows it. */
export const diagnose = (host: HostInternals, record: PluginRecord, stage: PluginFailureStage, message: string) =>
  Effect.zipRight(
    Effect.sync(() => record.diagnostics.push(message)),
    host.report({ pluginId: record.id, stage, message })
  )
