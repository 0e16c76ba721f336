/**
 * The public prompts module: what it says (the user's goals kept, what goes first when over
 * length), and that a skill of one's own built on it sends exactly what `LanguageModelSkill` sends.
 */
import { LanguageModel, Prompt } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer, Stream } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { messageLine } from "../src/domain/internal/transcript.js"
import { groupTurns } from "../src/domain/internal/turns.js"
import { Message } from "../src/domain/Message.js"
import { Prompts } from "../src/index.js"
import * as PromptText from "../src/layers/skills/internal/prompts.js"
import * as LanguageModelSkill from "../src/layers/skills/LanguageModelSkill.js"
import { SkillService } from "../src/services/SkillService.js"
import { narrativeSummary, noSummary } from "./fixtures/messages.js"

const conversationId = ConversationId.make("prompts")

const message = (seq: number, role: "user" | "assistant", content: string) =>
  new Message({ conversationId, seq, role, content, metadata: {}, tokenCount: 1, createdAt: DateTime.unsafeMake(0) })

const turns = groupTurns([
  message(1, "user", "I want to move my delivery of ORD-7 to Friday."),
  message(2, "assistant", "Done: Friday, between 8 and 12."),
  message(3, "user", "Thanks!")
]).turns

/** Where each phrase first appears in `text` (-1 when absent). */
const positions = (text: string, phrases: ReadonlyArray<string>) => phrases.map((phrase) => text.indexOf(phrase))

/** A provider-neutral model that records the prompts it is given. */
const recordingModel = (prompts: Array<Prompt.Prompt>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          prompts.push(options.prompt)
          return [
            {
              type: "text",
              text: JSON.stringify({
                facts: [{ key: "order_id", value: "ORD-7", category: "ENTITY", confidence: null }],
                remove: [],
                narrative: "The delivery of ORD-7 moved to Friday."
              })
            },
            { type: "finish", reason: "stop", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }
          ]
        }),
      streamText: () => Stream.empty
    })
  )

describe("Prompts", () => {
  it("the prompts keep the user's goals, and say what to drop first when over length, in that order", () => {
    const drops = ["superseded", "pleasantries", "tool payloads"]
    for (const text of [PromptText.summarizeSystemPrompt(200), PromptText.extractFactsSystemPrompt(200)]) {
      assert.include(text, "Keep the user's goals")
      const at = positions(text, drops)
      assert.isTrue(at.every((i) => i > 0), `${drops.join(", ")} in ${text}`)
      assert.deepStrictEqual([...at].sort((a, b) => a - b), at)
      assert.include(text, "separated by a blank line")
      assert.include(text, "150 words")
    }
    const shorten = PromptText.shortenSummaryPrompt(300, 200)
    assert.include(shorten, "100 over the limit of 200 tokens")
    assert.include(shorten, "user's open goals")
    assert.isTrue(positions(shorten, drops).every((i) => i > 0))
    // The facts alone, at maxTokens 0: no narrative asked.
    const alone = PromptText.extractFactsSystemPrompt(0)
    assert.include(alone, "- narrative: the empty string")
    assert.notInclude(alone, "folded in")
    assert.include(PromptText.extractFactsSystemPrompt(200), "folded in (at most 150 words)")
    // The text changed with the input format, the facts section with what it shows, the summary
    // section with the latest lines a fold may show alone, and the facts alone: the versions moved on.
    assert.deepStrictEqual(
      [PromptText.summarizePromptVersion, PromptText.extractFactsPromptVersion, PromptText.inputFormatVersion],
      [5, 7, 3]
    )
  })

  it("renders the input text of a call from its data: the summary, then each turn, a message a line", () => {
    assert.strictEqual(
      Prompts.summaryInput({ existingSummary: narrativeSummary("Earlier summary."), turns }),
      [
        "=== EXISTING_SUMMARY ===",
        "Earlier summary.",
        "=== END_EXISTING_SUMMARY ===",
        "",
        "=== NEW_TURNS ===",
        "Turn 1:",
        ...(turns[0]?.messages.map(messageLine) ?? []),
        "",
        "Turn 2:",
        "User: Thanks!",
        "=== END_NEW_TURNS ==="
      ].join("\n")
    )
  })

  it("the messages of a call: our system prompt unless hosted, the input, and the over-cap follow-up", () => {
    const input = { conversationId, existingSummary: noSummary, turns, maxTokens: 80 }
    const text = Prompts.summaryInput(input)
    const roles = (messages: ReadonlyArray<Prompt.MessageEncoded>) => messages.map((m) => m.role)
    assert.deepStrictEqual(roles(Prompts.summarizeMessages(input)), ["system", "user"])
    assert.deepStrictEqual(Prompts.summarizeMessages(input, "hosted"), [
      { role: "user", content: [{ type: "text", text }] }
    ])
    const overCap = { ...input, overCap: { summary: "too long", tokens: 120 } }
    assert.deepStrictEqual(roles(Prompts.summarizeMessages(overCap)), ["system", "user", "assistant", "user"])
    assert.deepStrictEqual(roles(Prompts.summarizeMessages(overCap, "hosted")), ["user", "assistant", "user"])
    const facts = Prompts.extractFactsMessages({ ...input, existingFacts: [] })
    assert.deepStrictEqual(roles(facts), ["system", "user"])
    assert.deepStrictEqual(facts[1], {
      role: "user",
      content: [
        { type: "text", text: "=== EXISTING_FACTS ===\nNONE\n=== END_EXISTING_FACTS ===" },
        { type: "text", text }
      ]
    })
  })

  it.effect("an extract-facts call reads the known facts its turns name; the model's answer keeps the others", () =>
    Effect.gen(function*() {
      const known = [
        { key: "order_id", value: "ORD-7", category: "ENTITY", confidence: 0.9 },
        { key: "delivery_day", value: "Thursday", category: "STATE" },
        { key: "pet", value: "a cat named Miso", category: "GENERAL" },
        { key: "budget_eur", value: "300", category: "NUMERIC" }
      ] as const
      const input = { conversationId, existingSummary: noSummary, turns, maxTokens: 80, existingFacts: known }
      // ORD-7 by its value, the delivery day by a word of its key; the cat and the budget are not named.
      const named = Prompts.extractFactsMessages(input)[1]?.content[0]
      assert.deepStrictEqual(named, {
        type: "text",
        text: [
          "=== EXISTING_FACTS ===",
          `["order_id","ORD-7","ENTITY",0.9]`,
          `["delivery_day","Thursday","STATE"]`,
          "=== END_EXISTING_FACTS ==="
        ].join("\n")
      })
      // The model answers about what it read: the facts it did not read are kept as they were.
      const skill = yield* Effect.provide(
        SkillService,
        LanguageModelSkill.layer({ model: "m" }).pipe(Layer.provide(recordingModel([])))
      )
      const output = yield* skill.extractFacts(input)
      assert.deepStrictEqual(output.value.facts.map((fact) => [fact.key, fact.value]), [
        ["order_id", "ORD-7"],
        ["delivery_day", "Thursday"],
        ["pet", "a cat named Miso"],
        ["budget_eur", "300"]
      ])
    }))

  it.effect("a skill of one's own built on Prompts sends exactly what LanguageModelSkill sends", () =>
    Effect.gen(function*() {
      const ours: Array<Prompt.Prompt> = []
      const skill = yield* Effect.provide(
        SkillService,
        LanguageModelSkill.layer({ model: "m" }).pipe(Layer.provide(recordingModel(ours)))
      )
      const input = { conversationId, existingSummary: narrativeSummary("Earlier summary."), turns, maxTokens: 80 }
      yield* skill.summarize(input)
      yield* skill.summarize({ ...input, overCap: { summary: "too long", tokens: 120 } })
      yield* skill.extractFacts({ ...input, existingFacts: [{ key: "city", value: "Lyon", category: "STATE" }] })
      assert.strictEqual(ours.length, 3)
      assert.deepStrictEqual(ours[0], Prompt.make(Prompts.summarizeMessages(input)))
      assert.deepStrictEqual(
        ours[1],
        Prompt.make(Prompts.summarizeMessages({ ...input, overCap: { summary: "too long", tokens: 120 } }))
      )
      assert.deepStrictEqual(
        ours[2],
        Prompt.make(
          Prompts.extractFactsMessages({ ...input, existingFacts: [{ key: "city", value: "Lyon", category: "STATE" }] })
        )
      )
      // Hosted instructions: the input alone.
      const hosted: Array<Prompt.Prompt> = []
      const hostedSkill = yield* Effect.provide(
        SkillService,
        LanguageModelSkill.layer({ model: "m", summarizeInstructions: { hosted: "prompt:p1" } }).pipe(
          Layer.provide(recordingModel(hosted))
        )
      )
      const output = yield* hostedSkill.summarize(input)
      assert.strictEqual(output.skillId, "language-model/summarize@prompt:p1")
      assert.deepStrictEqual(hosted[0], Prompt.make(Prompts.summarizeMessages(input, "hosted")))
      assert.deepStrictEqual(hosted[0]?.content.map((m) => m.role), ["user"])
    }))
})
