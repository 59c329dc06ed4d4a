export * as OpenAiCompatible from "./OpenAiCompatible.js"
