export * as FakeProvider from "./FakeProvider.js"
export * as OpenAiCompatible from "./OpenAiCompatible.js"
