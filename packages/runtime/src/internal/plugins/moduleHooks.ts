// External plugins share the host's `effect` and `@alisio/domain` (issue 11, "External plugins must
// work with the bundled CLI"). The bundle carries its own copies of both inlined, so a plugin that
// imported the copies in its own node_modules would run on a second Effect: its Tags, fibers and
// error classes would not be the host's (`instanceof`, `Schema.is` and every class check fail, and
// a plugin built against another effect version breaks outright). Instead, a module customization
// hook (`module.register`, Node 20.6+) resolves those imports, made from a plugin's folder, to
// generated modules that re-export the host's own instances.
//
// The hooks run on Node's loader thread, which cannot see the host's objects, so a generated module
// reads the instance from a registry on `globalThis`, and the export names it needs are asked of
// the main thread over a MessagePort. Modules load on first use, so a plugin pays only for what it
// imports. Imports made from anywhere else (the host itself, other packages) are left alone.

import * as module from "node:module"
import { pathToFileURL } from "node:url"
import { MessageChannel, type MessagePort } from "node:worker_threads"
import { hostModuleSpecifiers } from "./hostModuleNames.js"
import { hostModulesIncluded, loadHostModule, preloadCore } from "./hostModules.js"

const REGISTRY = Symbol.for("alisio.pluginHostModules")
const SCHEME = "alisio-host:"

// Runs on the loader thread: plain JavaScript, given as a data: URL so the bundle needs no extra file.
const hooksSource = `
const SCHEME = ${JSON.stringify(SCHEME)}
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
  const lines = ["const m = globalThis[Symbol.for(" + JSON.stringify(${JSON.stringify(REGISTRY.description)}) + ")].get(" + JSON.stringify(specifier) + ")"]
  names.forEach((name, i) => {
    lines.push("const e" + i + " = m[" + JSON.stringify(name) + "]")
    lines.push("export { e" + i + " as " + JSON.stringify(name) + " }")
  })
  return { format: "module", source: lines.join("\\n"), shortCircuit: true }
}
`

interface Installed {
  readonly port: MessagePort
  readonly roots: Set<string>
  readonly acks: Map<number, () => void>
  loading: number
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

/**
 * From Node 22 on, the loader thread may be asked synchronously (the main thread blocks until it
 * answers), so a hook that asks the main thread for export names deadlocks the process. There, every
 * shared module is loaded before the hooks are registered and the names travel with them (about
 * 200 ms of CPU, paid only by runs with an external plugin); Node 20 asks for what a plugin uses.
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

const install = async (roots: ReadonlyArray<string>): Promise<Installed> => {
  const registry = new Map<string, object>()
  ;(globalThis as Record<symbol, unknown>)[REGISTRY] = registry
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
  // Only a pending plugin import keeps the process alive for this port (see `sharingModules`).
  port1.unref()
  module.register(`data:text/javascript,${encodeURIComponent(hooksSource)}`, {
    data: { port: port2, specifiers: hostModuleSpecifiers, roots, names },
    transferList: [port2]
  })
  return { port: port1, roots: new Set(roots), acks, loading: 0 }
}

let nextAck = 0

/**
 * Runs `load` (the import of plugins in `roots`) with the host's modules shared with those folders.
 * The hooks are registered once per process, on the first external plugin.
 */
export const sharingModules = async <A>(roots: ReadonlyArray<string>, load: () => Promise<A>): Promise<A> => {
  if (!canShareModules()) return load()
  const urls = roots.map(rootURL)
  installed ??= preloadCore().then(() => install(urls))
  const state = await installed
  // The loader thread answers while the main thread awaits the import; the port must hold the
  // event loop open meanwhile, or Node would exit with the import unsettled.
  if (state.loading++ === 0) state.port.ref()
  try {
    if (urls.some((url) => !state.roots.has(url))) {
      for (const url of urls) state.roots.add(url)
      const ack = nextAck++
      // The new folders must be known on the loader thread before the first import from them.
      await new Promise<void>((resolve) => {
        state.acks.set(ack, resolve)
        state.port.postMessage({ roots: [...state.roots], ack })
      })
    }
    return await load()
  } finally {
    if (--state.loading === 0) state.port.unref()
  }
}
