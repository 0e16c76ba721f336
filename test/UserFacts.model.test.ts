/**
 * What is known about a user, learned by a model over the real OpenAI client against the local
 * server: a later conversation's extraction reads the user's facts its turns name (and only those),
 * and a key the model removes leaves what is known about the user.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Redacted } from "effect"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { UserMemoryService } from "../src/services/UserMemoryService.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

const at = (day: number, minute = 0) => DateTime.formatIso(DateTime.unsafeMake(Date.UTC(2026, 2, day, 9, minute)))

const exchange = (day: number, user: string, assistant: string) => [
  { role: "user" as const, content: user, createdAt: at(day) },
  { role: "assistant" as const, content: assistant, createdAt: at(day, 1) }
]

const fact = (key: string, value: string) => ({ key, value, category: "ENTITY", confidence: null })

/** The model: the order and the phone from the first conversation, the order's removal from the second. */
const script: Fake.Script = (request, n) => {
  const input = Fake.userTexts(request).join("\n")
  if (!Fake.isStructured(request)) return Fake.text("A summary.")(request, n)
  return input.includes("cancel order")
    ? Fake.object({ facts: [], remove: ["order_id"], narrative: "The order was cancelled." })(request, n)
    : Fake.object({
      facts: [fact("order_id", "ORD-5521"), fact("phone", "07700 900461")],
      remove: [],
      narrative: "Tess ordered a worktop."
    })(request, n)
}

describe("what is known about a user, learned by a model", () => {
  it.scopedLive("a later conversation's extraction reads the facts it names, and a removed key leaves", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const context = yield* Layer.build(ChatMemoryLive.layer({
        strategy: "summarization",
        store: { _tag: "memory" },
        summarizer: { _tag: "openai", apiKey: Redacted.make(Fake.apiKey), apiUrl: fake.apiUrl, model: Fake.model }
      }))
      const [memory, users] = [
        yield* Effect.provide(ChatMemoryService, context),
        yield* Effect.provide(UserMemoryService, context)
      ]

      yield* memory.addMessages(
        "kitchen",
        exchange(2, "I ordered the oak worktop, order ORD-5521. My phone is 07700 900461.", "Noted."),
        { userId: "tess" }
      )
      yield* memory.awaitIdle()
      assert.sameMembers((yield* users.getFacts("tess")).map((f) => f.value), ["ORD-5521", "07700 900461"])

      yield* memory.addMessages(
        "changes",
        exchange(16, "Please cancel order ORD-5521.", "Done: it is cancelled."),
        { userId: "tess" }
      )
      yield* memory.awaitIdle()
      const extractions = (yield* fake.requests).filter(Fake.isStructured)
      assert.strictEqual(extractions.length, 2)
      // The narrative would be dropped: none is asked for.
      for (const request of extractions) assert.include(Fake.systemText(request), "- narrative: the empty string")
      // The second reads the known order, which its turns name, and not the phone.
      const second = extractions.slice(1).flatMap(Fake.userTexts).join("\n")
      assert.include(second, JSON.stringify(["order_id", "ORD-5521", "ENTITY"]))
      assert.notInclude(second, "07700 900461")

      const known = yield* users.getFacts("tess")
      assert.deepStrictEqual(known.map((f) => [f.key, f.value]), [["phone", "07700 900461"]])
      const fresh = yield* memory.getContext("new-chat", { userId: "tess" })
      assert.deepStrictEqual(fresh.userFacts.map((f) => f.value), ["07700 900461"])
    }).pipe(Effect.provide(Fake.layer(script))))
})
