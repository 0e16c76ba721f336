/**
 * The `eval` command's core: questions checked against the context at their turn, by age, for
 * each strategy; and a model asked over the context through the real `@effect/ai-openai` client
 * (against the local fake server), its reply graded against the literal answers.
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Eval from "../src/cli/Eval.js"
import type * as Transcript from "../src/cli/Transcript.js"
import type { MessageInput } from "../src/domain/Message.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { silentStdio } from "./fixtures/cli.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

/** 90 turns; turn 1 states the order number and turn 2 the dock, then small talk about the weather. */
const turns: ReadonlyArray<Transcript.ConversationTurn> = Array.from(
  { length: 90 },
  (_, i): Transcript.ConversationTurn => {
    const n = i + 1
    const user = n === 1
      ? "My order number is ORD-2024-88417."
      : n === 2
      ? "Deliver it to dock 7 please."
      : `Turn ${n}: what is the weather like today? ${"Sunny spells and a light breeze. ".repeat(3)}`
    const messages: ReadonlyArray<MessageInput> = [
      { role: "user", content: user },
      { role: "assistant", content: `Noted (turn ${n}). ${"I will keep that in mind for the delivery. ".repeat(2)}` }
    ]
    return { conversation: null, messages }
  }
)

const question = (id: string, answers: readonly [string, ...Array<string>], stated: number, asked: number) => ({
  id,
  factKey: null,
  question: `Question ${id}?`,
  answers,
  statedAtTurn: stated,
  lastStatedTurn: stated,
  supersededAtTurn: null,
  askedAfterTurn: asked
})

const questions = [
  question("order", ["ORD-2024-88417"], 1, 70),
  question("dock", ["dock 7"], 2, 85),
  question("recent", ["Turn 89:"], 89, 90)
]

const memory = (strategy: "noop" | "sliding-window") =>
  Layer.merge(ChatMemoryLive.layer({ strategy, store: { _tag: "memory" }, tokenBudget: 600 }), silentStdio)

describe("eval", () => {
  it.effect(
    "a question counts as kept when the context holds every answer string at its turn",
    () =>
      Effect.gen(function*() {
        const window = yield* Eval.evaluate("sliding-window", turns, questions, Option.none()).pipe(
          Effect.provide(memory("sliding-window"))
        )
        // A window of 600 tokens has long lost turns 1 and 2 by turns 70 and 85; it holds turn 89.
        assert.deepStrictEqual(window.questions.map((q) => [q.id, q.inContext, q.age]), [
          ["order", false, 69],
          ["dock", false, 83],
          ["recent", true, 1]
        ])
        assert.strictEqual(window.inContext, 1)
        assert.isAtMost(window.contextTokensMax, 600)
        assert.isAbove(window.turnsWithOmissions, 0)
        assert.strictEqual(window.summarizations, 0)
        assert.isNull(window.modelCorrect)
        const whole = yield* Eval.evaluate("noop", turns, questions, Option.none()).pipe(Effect.provide(memory("noop")))
        assert.strictEqual(whole.inContext, 3)
        assert.strictEqual(whole.turnsWithOmissions, 0)
        const table = Eval.table([window, whole], questions.length)
        assert.include(table, "1/3 (33 %)")
        assert.include(table, "3/3 (100 %)")
      })
  )

  it.effect("a transcript of several conversations: the run's figures count every conversation's", () =>
    Effect.gen(function*() {
      const two = turns.slice(0, 6).map((turn, i) => ({ ...turn, conversation: i < 4 ? "first" : "second" }))
      const run = yield* Eval.evaluate("noop", two, [question("order", ["ORD-2024-88417"], 1, 6)], Option.none())
      const memory = yield* ChatMemoryService
      // The run's ids: eval-<strategy>-<conversation>.
      const first = yield* memory.stats("eval-noop-first")
      const second = yield* memory.stats("eval-noop-second")
      assert.strictEqual(first.messagesStored, 8)
      assert.strictEqual(second.messagesStored, 4)
      assert.strictEqual(run.tokensStored, first.tokensStored + second.tokensStored)
    }).pipe(Effect.provide(memory("noop"))))

  it.scoped(
    "with a model: the question goes over the context through the OpenAI client, and the reply is graded",
    () =>
      Effect.gen(function*() {
        const fake = yield* Fake.FakeOpenAi
        const model = OpenAiLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
          Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make(Fake.apiKey), apiUrl: fake.apiUrl })),
          Layer.provide(NodeHttpClient.layerUndici)
        )
        const result = yield* Effect.flatMap(
          Eval.askLanguageModel,
          (ask) =>
            Eval.evaluate("noop", turns.slice(0, 72), [question("order", ["ORD-2024-88417"], 1, 70)], Option.some(ask))
        ).pipe(Effect.provide(Layer.merge(memory("noop"), model)))
        assert.deepStrictEqual(result.questions.map((q) => [q.inContext, q.modelCorrect]), [[true, true]])
        assert.strictEqual(result.modelCorrect, 1)
        const [request] = yield* fake.requests
        const texts = (request?.body.input ?? []).flatMap((message) =>
          typeof message.content === "string" ? [message.content] : message.content.map((part) => part.text ?? "")
        )
        // The context went with the question: the order number from turn 1, then the question last.
        assert.isTrue(texts.some((text) => text.includes("ORD-2024-88417")))
        assert.include(texts.at(-1) ?? "", "Question order?")
      }).pipe(Effect.provide(Fake.layer(Fake.text("Your order number is ord-2024-88417."))))
  )

  it("a `when` answer is credited with the date on what its turn said: the date alone is not enough", () => {
    const said = ["my boiler is playing up again and the flat is freezing", "Sorry to hear that."]
    const heading = ["Summary of the conversation so far:", "[2025-01-05]", "User: my boiler is playing up again"]
    assert.isTrue(Eval.datesSaid(heading.join("\n"), ["2025-01-05"], said))
    // The date is shown, but over another line of that day: not what the question asks about.
    const otherLine = ["[2025-01-05]", "User: I signed up for the Dovedale Half", "[2025-01-07]"]
    assert.isFalse(
      Eval.datesSaid([...otherLine, "User: my boiler is playing up again"].join("\n"), ["2025-01-05"], said)
    )
    assert.isFalse(Eval.datesSaid(otherLine.join("\n"), ["2025-01-05"], said))
    // A recent message's label dates its own line; a recalled turn's label the lines under it.
    assert.isTrue(Eval.datesSaid("[2025-01-05 19:23 UTC] my boiler is playing up again", ["2025-01-05"], said))
    assert.isTrue(
      Eval.datesSaid("[seq 10-11, 2025-01-05 19:23 UTC]\nUser: my boiler is playing up again and", ["2025-01-05"], said)
    )
    assert.isFalse(Eval.datesSaid("[2025-01-06 08:00 UTC] my boiler is playing up again", ["2025-01-05"], said))
  })
})
