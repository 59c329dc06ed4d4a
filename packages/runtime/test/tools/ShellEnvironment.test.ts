import * as ShellEnvironment from "@alisio/runtime/tools/ShellEnvironment"
import { assert, describe, it } from "@effect/vitest"
import * as Redacted from "effect/Redacted"

const base = {
  PATH: "/usr/bin",
  HOME: "/home/me",
  LANG: "C.UTF-8",
  LC_ALL: "C",
  OPENAI_API_KEY: "sk-openai-0123456789",
  GROQ_KEY_FILE: "/keys/groq",
  GITHUB_TOKEN: "ghp_0123456789",
  my_secret: "s3cret-value",
  DB_PASSWORD: "hunter22",
  ACME_CREDENTIAL: "acme-0123456789",
  COPY: "acme-0123456789",
  SHORT: "abc",
  EDITOR: "vi"
}

describe("shell environment", () => {
  it("TL-8 by default everything but provider keys and names like KEY, SECRET, TOKEN, PASSWORD", () => {
    assert.deepStrictEqual(ShellEnvironment.shellEnvironment(undefined, base), {
      PATH: "/usr/bin",
      HOME: "/home/me",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      ACME_CREDENTIAL: "acme-0123456789",
      COPY: "acme-0123456789",
      SHORT: "abc",
      EDITOR: "vi"
    })
  })

  it("TL-8 provider keys go by name and by value, whatever the rest of the policy says", () => {
    const env = ShellEnvironment.shellEnvironment(
      {
        ignoreDefaultExcludes: true,
        secretNames: ["ACME_CREDENTIAL"],
        secretValues: ["acme-0123456789", "abc"]
      },
      base
    )
    assert.isUndefined(env.OPENAI_API_KEY)
    assert.isUndefined(env.ACME_CREDENTIAL)
    assert.isUndefined(env.COPY, "a copy of a key under another name")
    assert.strictEqual(env.SHORT, "abc", "values this short are no secrets")
    assert.strictEqual(env.GITHUB_TOKEN, "ghp_0123456789", "default excludes are off")
  })

  it("TL-8 inherit core or none, exclude, includeOnly and set apply in that order", () => {
    assert.deepStrictEqual(ShellEnvironment.shellEnvironment({ inherit: "core" }, base), {
      PATH: "/usr/bin",
      HOME: "/home/me",
      LANG: "C.UTF-8",
      LC_ALL: "C"
    })
    assert.deepStrictEqual(ShellEnvironment.shellEnvironment({ inherit: "none", set: { CI: "1" } }, base), { CI: "1" })
    assert.deepStrictEqual(
      ShellEnvironment.shellEnvironment({ exclude: ["lc_*", "ed?tor"], includeOnly: ["*A*", "LC_ALL"] }, base),
      { PATH: "/usr/bin", LANG: "C.UTF-8", ACME_CREDENTIAL: "acme-0123456789" }
    )
    assert.deepStrictEqual(
      ShellEnvironment.shellEnvironment({ inherit: "none", set: { OPENAI_API_KEY: "chosen" } }, base),
      { OPENAI_API_KEY: "chosen" },
      "set is the person's explicit choice"
    )
  })

  it("TL-8 name patterns take classes and {a,b} alternatives, ignoring case", () => {
    assert.deepStrictEqual(
      ShellEnvironment.shellEnvironment(
        { ignoreDefaultExcludes: true, exclude: ["{path,home}", "[a-d]*", "*_[!k]*"], secretNames: [] },
        base
      ),
      { LANG: "C.UTF-8", SHORT: "abc", EDITOR: "vi" }
    )
  })

  it("TL-8 the configuration's policy keeps every configured provider key out", () => {
    const policy = ShellEnvironment.policyFromConfig(
      {
        providers: {
          acme: { apiKeyEnv: "ACME_CREDENTIAL" },
          local: { apiKey: Redacted.make("in-config-0123456789") }
        },
        shell: { environment: { inherit: "all", exclude: ["EDITOR"] } }
      },
      { ...base, ELSEWHERE: "in-config-0123456789" }
    )
    const env = ShellEnvironment.shellEnvironment(policy, { ...base, ELSEWHERE: "in-config-0123456789" })
    assert.deepStrictEqual(Object.keys(env).sort(), ["HOME", "LANG", "LC_ALL", "PATH", "SHORT"])
  })
})
