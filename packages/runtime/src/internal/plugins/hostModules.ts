// The modules the host shares with external plugins (see moduleHooks.ts): every public module of
// `effect` and `@alisio/domain`. A dynamic import per module would make the bundler cut the CLI
// into hundreds of chunks (every run got slower by half a second); instead two chunks: the modules
// a run loads anyway, and the rest of effect, loaded only when a plugin imports one of them.
// Sharing a module whole defeats the bundler's tree shaking of it, which costs every run about
// 150 ms of CPU; so the CLI is bundled twice (packages/cli/scripts/bundle.mjs): without this file
// (a stub replaces it) for runs that cannot load an external plugin, with it for those that can.
// PluginHostModules.test.ts checks the lists against the packages.

import { coreSpecifiers } from "./hostModuleNames.js"

/** False in the CLI bundle built for runs without external plugins. */
export const hostModulesIncluded = true

/**
 * Loads the core modules now. Called before the loader hooks are registered: once they are, every
 * module the process loads goes through Node's loader thread, a round trip per file.
 */
export const preloadCore = async (): Promise<void> => {
  await import("./hostModulesCore.js")
}

/** The host's own instance of a shared module, or undefined for a module it does not share. */
export const loadHostModule = async (specifier: string): Promise<object | undefined> =>
  coreSpecifiers.has(specifier)
    ? (await import("./hostModulesCore.js")).coreModules[specifier]
    : (await import("./hostModulesRest.js")).restModules[specifier]
