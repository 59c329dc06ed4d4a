export * as SessionStore from "./SessionStore.js"
