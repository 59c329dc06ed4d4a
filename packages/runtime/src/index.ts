export * as BlobStore from "./BlobStore.js"
export * as ProcessOwner from "./ProcessOwner.js"
export * as Providers from "./Providers.js"
export * as SessionStore from "./SessionStore.js"
