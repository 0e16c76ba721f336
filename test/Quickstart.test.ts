/**
 * The README's agent (`examples/quickstart.ts`, shown verbatim in the README), as a user runs it,
 * against the fake OpenAI server: the first turn of a new conversation of the user sends the model
 * what the user said in an earlier one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { root, spawnScript } from "./fixtures/cli.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

/** The agent's two calls, in order; the summarizer's, if any were due, get a summary. */
const agentScript = (): Fake.Script => {
  const agent = Fake.sequence(Fake.text("Nice to meet Biscuit."), Fake.text("Your dog is called Biscuit."))
  let calls = 0
  return (request, n) =>
    request.body.model === "gpt-4o-mini" ? agent(request, ++calls) : Fake.text("A summary.")(request, n)
}

const source = readFileSync(join(root, "examples", "quickstart.ts"), "utf8")

describe("examples/quickstart.ts", () => {
  it("is the README's agent, word for word", () => {
    assert.include(readFileSync(join(root, "README.md"), "utf8"), `\`\`\`ts\n${source}\`\`\``)
  })

  it.scoped(
    "a new conversation of the user knows what the user said in an earlier one",
    () =>
      Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const run = yield* spawnScript("examples/quickstart.ts", [], {
          env: {
            OPENAI_API_KEY: Fake.apiKey,
            OPENAI_BASE_URL: fake.apiUrl,
            MEMORY_STORE: "memory",
            MEMORY_SUMMARIZER_MODEL: "summarizer-model"
          }
        })
        assert.strictEqual(run.code, 0, run.stderr)
        assert.include(run.stdout, "monday> Nice to meet Biscuit.")
        assert.include(run.stdout, "tuesday> Your dog is called Biscuit.")
        const turns = (yield* fake.requests).filter((request) => request.body.model === "gpt-4o-mini")
        assert.strictEqual(turns.length, 2)
        const [monday, tuesday] = turns
        assert.deepStrictEqual(monday === undefined ? [] : Fake.userTexts(monday), ["Hi! My dog is called Biscuit."])
        // Tuesday's conversation holds nothing yet: Biscuit reaches the model from Monday's.
        assert.include(tuesday?.rawBody, "Biscuit")
        assert.include(tuesday === undefined ? [] : Fake.userTexts(tuesday), "What is my dog called?")
      }).pipe(Effect.provide(Fake.layer(agentScript()))),
    { timeout: 60_000 }
  )
})
