/**
 * `examples/agent.ts`, as a user runs it, against the fake OpenAI server: two lines on stdin, each
 * a streamed turn with tool calls (the app's `get_order`, then the recall tool `search_memory`
 * finding the first turn), the system prompt stored once, the answers printed as they stream.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnScript } from "./fixtures/cli.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

/** The agent's calls (streamed) in order; the summarizer's, if any were due, get a summary. */
const agentScript = (): Fake.Script => {
  const agent = Fake.sequence(
    Fake.functionCall("get_order", { orderId: "ORD-7" }, "call_1"),
    Fake.text("Your order ORD-7 has shipped and arrives Thursday."),
    Fake.functionCall("search_memory", { query: "order", limit: null }, "call_2"),
    Fake.text("You asked about order ORD-7, arriving Thursday.")
  )
  let calls = 0
  return (request, n) => request.body.stream === true ? agent(request, ++calls) : Fake.text("A summary.")(request, n)
}

const isSystem = (item: Fake.InputItem) => "role" in item && item.role === "system"

describe("examples/agent.ts", () => {
  it.scoped(
    "a streamed, tool-calling agent with memory and the recall tools, against the fake server",
    () =>
      Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const run = yield* spawnScript("examples/agent.ts", [], {
          env: { OPENAI_API_KEY: Fake.apiKey, OPENAI_BASE_URL: fake.apiUrl, MEMORY_STORE: "memory" },
          stdin: "Where is my order ORD-7?\nWhat did I ask about first?\nexit\n"
        })
        assert.strictEqual(run.code, 0, run.stderr)
        assert.include(run.stdout, "Your order ORD-7 has shipped and arrives Thursday.")
        assert.include(run.stdout, "You asked about order ORD-7, arriving Thursday.")
        // The first turn stores the system prompt, the question, the call, its result and the answer;
        // the second its question and answer (the recall tool's call and result are not stored).
        assert.include(run.stdout, "5 messages stored]")
        assert.include(run.stdout, "2 messages stored]")

        const requests = (yield* fake.requests).filter((request) => request.body.stream === true)
        assert.strictEqual(requests.length, 4)
        const [first, , third, fourth] = requests
        assert.isDefined(third)
        assert.isDefined(fourth)
        for (const name of ["get_order", "search_memory", "read_turns"]) assert.include(first?.rawBody, `"${name}"`)
        // The system prompt opens every call, once: given on the first turn, stored and replayed after.
        for (const request of requests) {
          assert.strictEqual(Fake.inputItems(request).filter(isSystem).length, 1)
          assert.include(Fake.systemText(request), "You are a concise, helpful assistant.")
        }
        assert.include(Fake.userTexts(third).join("\n"), "Where is my order ORD-7?")
        // search_memory ran over this conversation's memory, bound by the turn.
        const output = Fake.toolOutputs(fourth).at(-1)
        assert.strictEqual(output?.callId, "call_2")
        assert.include(output?.output, "ORD-7")
      }).pipe(Effect.provide(Fake.layer(agentScript()))),
    { timeout: 60_000 }
  )
})
