import { assert, describe, it } from "@effect/vitest"
import { isLocalServer } from "../src/Titles.js"

describe("Titles", () => {
  it("CLI-1 servers on this machine or a private network are local: not asked for titles by default", () => {
    for (const url of [
      "http://127.0.0.1:11434/v1",
      "http://localhost:8080/v1",
      "http://[::1]:8000/v1",
      "http://10.0.0.5/v1",
      "http://172.20.1.1/v1",
      "http://192.168.1.20:1234/v1",
      "http://gpu-box.local:8000/v1",
      "http://[fd12::1]/v1"
    ]) {
      assert.isTrue(isLocalServer(url), url)
    }
    for (const url of [
      "https://api.openai.com/v1",
      "https://openrouter.ai/api/v1",
      "http://172.32.0.1/v1",
      "nonsense"
    ]) {
      assert.isFalse(isLocalServer(url), url)
    }
  })
})
