// External plugins share the host's `effect` and `@alisio/domain` (issue 11, "External plugins must
// work with the bundled CLI"). The bundle carries its own copies of both inlined, so a plugin that
// imported the copies in its own node_modules would run on a second Effect: its Tags, fibers and
// error classes would not be the host's (`instanceof`, `Schema.is` and every class check fail, and
// a plugin built against another effect version breaks outright). Instead, a module customization
// hook (`module.register`, Node 20.6+) resolves those imports, made from a plugin's folder, to
// generated modules that re-export the host's own instances.
//
// A generated module reads the instance from a registry on `globalThis`. Where Node has
// `module.registerHooks` (22.15+, 23.5+, so every LTS users run) the hooks run on the main thread,
// synchronously, and know every export name from the start. On Node 20 they run on Node's loader
// thread (`module.register`), which cannot see the host's objects: the export names a generated
// module needs are asked of the main thread over a MessagePort, so modules load on first use. That
// thread is a second V8 isolate: ~110 ms of CPU and ~20 MB to start, and a round trip for every file
// the process loads after it. Imports made from anywhere else (the host itself, other packages) are
// left alone.

import * as module from "node:module"
import { pathToFileURL } from "node:url"
import { MessageChannel } from "node:worker_threads"
import { hostModuleSpecifiers } from "./hostModuleNames.js"
import { hostModulesIncluded, loadHostModule, preloadCore } from "./hostModules.js"

const REGISTRY = Symbol.for("alisio.pluginHostModules")
const SCHEME = "alisio-host:"

/** The source of the module standing for `specifier`: the host's instance, export by export. */
const generatedModule = (registryKey: string, specifier: string, names: ReadonlyArray<string>): string => {
  const lines = [`const m = globalThis[Symbol.for(${JSON.stringify(registryKey)})].get(${JSON.stringify(specifier)})`]
  names.forEach((name, i) => {
    lines.push(`const e${i} = m[${JSON.stringify(name)}]`)
    lines.push(`export { e${i} as ${JSON.stringify(name)} }`)
  })
  return lines.join("\n")
}

// Runs on the loader thread (Node 20): plain JavaScript, given as a data: URL so the bundle needs no extra file.
const hooksSource = `
const SCHEME = ${JSON.stringify(SCHEME)}
const generatedModule = ${generatedModule.toString()}
let port
let specifiers = new Set()
let roots = []
let known = {}
const pending = new Map()
let nextId = 0
export function initialize(data) {
  port = data.port
  specifiers = new Set(data.specifiers)
  roots = data.roots
  known = data.names ?? {}
  port.on("message", (message) => {
    if (message.roots !== undefined) { roots = message.roots; port.postMessage({ ack: message.ack }); return }
    const waiter = pending.get(message.id)
    pending.delete(message.id)
    if (waiter === undefined) return
    if (message.error !== undefined) waiter.reject(new Error(message.error))
    else waiter.resolve(message.names)
  })
}
const exportNames = (specifier) =>
  new Promise((resolve, reject) => {
    const id = nextId++
    pending.set(id, { resolve, reject })
    port.postMessage({ id, specifier })
  })
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL
  if (specifiers.has(specifier) && parent !== undefined && roots.some((root) => parent.startsWith(root))) {
    return { url: SCHEME + specifier, shortCircuit: true }
  }
  return nextResolve(specifier, context)
}
export async function load(url, context, nextLoad) {
  if (!url.startsWith(SCHEME)) return nextLoad(url, context)
  const specifier = url.slice(SCHEME.length)
  const names = known[specifier] ?? (await exportNames(specifier))
  return { format: "module", source: generatedModule(${JSON.stringify(REGISTRY.description)}, specifier, names), shortCircuit: true }
}
`

/** Sharing as installed: the plugin folders it applies to, and how an import is awaited. */
interface Installed {
  /** Makes the hooks apply to imports from `urls` (folder URLs ending in `/`) as well. */
  readonly addRoots: (urls: ReadonlyArray<string>) => Promise<void>
  /**
   * Runs a plugin's import; the thread's port must keep the process alive meanwhile, and no longer
   * once `signal` says the import was given up (a top-level await that never settles).
   */
  readonly importing: <A>(load: () => Promise<A>, signal?: AbortSignal | undefined) => Promise<A>
}

let installed: Promise<Installed> | undefined

/** The URL to `import()` a plugin's entry file with. */
export const entryURL = (file: string): string => pathToFileURL(file).href

/** Whether this Node can share modules with plugins (`module.register`, Node 20.6+). */
export const canShareModules = (): boolean => typeof module.register === "function"

/** Whether this build carries the modules to share (see hostModules.ts). */
export const sharedModulesIncluded: boolean = hostModulesIncluded

const rootURL = (root: string): string => {
  const url = pathToFileURL(root).href
  return url.endsWith("/") ? url : `${url}/`
}

interface ResolveContext {
  readonly parentURL?: string | undefined
}
interface MainThreadHooks {
  readonly resolve: (
    specifier: string,
    context: ResolveContext,
    next: (specifier: string, context: ResolveContext) => unknown
  ) => unknown
  readonly load: (url: string, context: unknown, next: (url: string, context: unknown) => unknown) => unknown
}

/** `module.registerHooks` (Node 22.15+, 23.5+): hooks called on the main thread, synchronously. */
const registerHooks = (module as unknown as { readonly registerHooks?: (hooks: MainThreadHooks) => unknown })
  .registerHooks

/**
 * From Node 22 on, the loader thread may be asked synchronously (the main thread blocks until it
 * answers), so a hook that asks the main thread for export names deadlocks the process; and hooks
 * on the main thread are synchronous. There, every shared module is loaded before the hooks are
 * registered (about 50 ms of CPU over what a run loads anyway, paid only by runs with an external
 * plugin), and the names come with them; Node 20 asks for what a plugin uses.
 */
const namesUpFront = Number(process.versions.node.split(".")[0]) >= 22

const loadAll = async (registry: Map<string, object>): Promise<Record<string, ReadonlyArray<string>>> => {
  const names: Record<string, ReadonlyArray<string>> = {}
  for (const specifier of hostModuleSpecifiers) {
    const namespace = await loadHostModule(specifier)
    if (namespace === undefined) continue
    registry.set(specifier, namespace)
    names[specifier] = Object.keys(namespace)
  }
  return names
}

const newRegistry = (): Map<string, object> => {
  const registry = new Map<string, object>()
  ;(globalThis as Record<symbol, unknown>)[REGISTRY] = registry
  return registry
}

const onMainThread = async (
  register: NonNullable<typeof registerHooks>,
  urls: ReadonlyArray<string>
): Promise<Installed> => {
  const names = await loadAll(newRegistry())
  const specifiers = new Set(hostModuleSpecifiers)
  const roots = new Set(urls)
  const fromPlugin = (parent: string | undefined) =>
    parent !== undefined && [...roots].some((root) => parent.startsWith(root))
  register({
    resolve: (specifier, context, next) =>
      specifiers.has(specifier) && fromPlugin(context.parentURL)
        ? { url: SCHEME + specifier, shortCircuit: true }
        : next(specifier, context),
    load: (url, context, next) => {
      if (!url.startsWith(SCHEME)) return next(url, context)
      const specifier = url.slice(SCHEME.length)
      const source = generatedModule(REGISTRY.description!, specifier, names[specifier] ?? [])
      return { format: "module", source, shortCircuit: true }
    }
  })
  return {
    addRoots: async (more) => {
      for (const url of more) roots.add(url)
    },
    importing: (load) => load()
  }
}

const onLoaderThread = async (urls: ReadonlyArray<string>): Promise<Installed> => {
  const registry = newRegistry()
  const names = namesUpFront ? await loadAll(registry) : undefined
  const { port1, port2 } = new MessageChannel()
  const acks = new Map<number, () => void>()
  port1.on("message", (message: { readonly id: number; readonly specifier: string; readonly ack?: number }) => {
    if (message.ack !== undefined) {
      acks.get(message.ack)?.()
      acks.delete(message.ack)
      return
    }
    loadHostModule(message.specifier).then(
      (namespace) => {
        if (namespace === undefined) {
          port1.postMessage({ id: message.id, error: `alisio does not share ${message.specifier} with plugins` })
          return
        }
        registry.set(message.specifier, namespace)
        port1.postMessage({ id: message.id, names: Object.keys(namespace) })
      },
      (error: unknown) => port1.postMessage({ id: message.id, error: String(error) })
    )
  })
  // Only a pending plugin import keeps the process alive for this port (see `importing`).
  port1.unref()
  module.register(`data:text/javascript,${encodeURIComponent(hooksSource)}`, {
    data: { port: port2, specifiers: hostModuleSpecifiers, roots: urls, names },
    transferList: [port2]
  })
  const roots = new Set(urls)
  let nextAck = 0
  let loading = 0
  return {
    addRoots: async (more) => {
      if (more.every((url) => roots.has(url))) return
      for (const url of more) roots.add(url)
      const ack = nextAck++
      // The new folders must be known on the loader thread before the first import from them.
      await new Promise<void>((resolve) => {
        acks.set(ack, resolve)
        port1.postMessage({ roots: [...roots], ack })
      })
    },
    importing: async (load, signal) => {
      // The loader thread answers while the main thread awaits the import; the port must hold the
      // event loop open meanwhile, or Node would exit with the import unsettled.
      if (loading++ === 0) port1.ref()
      let done = false
      const release = () => {
        if (done) return
        done = true
        if (--loading === 0) port1.unref()
      }
      signal?.addEventListener("abort", release, { once: true })
      try {
        return await load()
      } finally {
        signal?.removeEventListener("abort", release)
        release()
      }
    }
  }
}

/**
 * Runs `load` (the import of plugins in `roots`) with the host's modules shared with those folders.
 * The hooks are registered once per process, on the first external plugin.
 */
export const sharingModules = async <A>(
  roots: ReadonlyArray<string>,
  load: () => Promise<A>,
  signal?: AbortSignal | undefined
): Promise<A> => {
  if (!canShareModules()) return load()
  const urls = roots.map(rootURL)
  installed ??= preloadCore().then(() =>
    registerHooks === undefined ? onLoaderThread(urls) : onMainThread(registerHooks, urls)
  )
  const state = await installed
  return state.importing(async () => {
    await state.addRoots(urls)
    return load()
  }, signal)
}
