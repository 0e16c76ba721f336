/**
 * The offline extractive skill: deterministic, keeps the sentences that carry identifiers,
 * amounts, dates and decisions over small talk, and never passes the cap.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as ExtractiveSkill from "../src/layers/skills/ExtractiveSkill.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import { SkillService } from "../src/services/SkillService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"

const conversationId = ConversationId.make("extractive")

/** The summarizer's input, in the EXISTING_SUMMARY / NEW_TURNS format. */
const input = (existing: string | null, lines: ReadonlyArray<string>) =>
  [
    "=== EXISTING_SUMMARY ===",
    existing ?? "NONE",
    "=== END_EXISTING_SUMMARY ===",
    "",
    "=== NEW_TURNS ===",
    "Turn 1:",
    ...lines,
    "=== END_NEW_TURNS ==="
  ].join("\n")

const turns = [
  "User: Hi there, hope your week is going well.",
  "Assistant: Thanks, all good here. How can I help today?",
  "User: Please ship order ORD-2024-88417 to 88 Halvorsen Way instead. We agreed on freight of $1,240.00.",
  "Assistant: Done. Delivery is confirmed for 2024-04-18 between 07:00 and 11:00.",
  "User: Great, the weather has been lovely lately.",
  "Assistant: It has! Anything else?",
  "User: We decided to go with the R-290 units; the budget is $160,000 and intake starts on June 3."
]

const withSkill = <A, E>(effect: Effect.Effect<A, E, SkillService | TokenCounter>) =>
  Effect.provide(effect, ExtractiveSkill.layer.pipe(Layer.provideMerge(ApproximateTokenCounter.layer)))

describe("ExtractiveSkill", () => {
  it.effect("keeps identifiers, amounts, dates and decisions, and drops small talk", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const { skillId, value } = yield* skill.summarize({ conversationId, text: input(null, turns), maxTokens: 200 })
      for (const kept of ["ORD-2024-88417", "$1,240.00", "2024-04-18", "R-290", "$160,000", "June 3"]) {
        assert.include(value, kept)
      }
      assert.notInclude(value, "weather")
      assert.notInclude(value, "hope your week")
      assert.strictEqual(skillId, "extractive/summarize@1")
    })))

  it.effect("is deterministic, and folds the existing summary with the new turns", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const text = input("User: The account is ACC-BFF-30271.", turns)
      const first = yield* skill.summarize({ conversationId, text, maxTokens: 300 })
      const second = yield* skill.summarize({ conversationId, text, maxTokens: 300 })
      assert.strictEqual(first.value, second.value)
      assert.include(first.value, "ACC-BFF-30271")
      assert.include(first.value, "ORD-2024-88417")
    })))

  it.effect("ranks by what a line carries per token: a short sentence with an id beats a long tool dump with a few", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const counter = yield* TokenCounter
      const note = "the unit was inspected and the crate was found in good order with no visible damage ".repeat(4)
      const dump = `Tool: ${JSON.stringify({ note, skus: ["SKU-1000-X", "SKU-1001-X", "SKU-1002-X"] })}`
      const ticket = "Assistant: Your ticket is TCK-70962."
      // Room for the dump alone, or the ticket line with room to spare: the ticket must be the one kept.
      const maxTokens = (yield* counter.count(dump)) + 1
      const { value } = yield* skill.summarize({ conversationId, text: input(null, [dump, ticket]), maxTokens })
      assert.include(value, "TCK-70962")
      assert.notInclude(value, "SKU-1000-X")
    })))

  it.effect("extracts facts from the key sentences and merges them with the existing ones", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const existing = [{ key: "id:acc-bff-30271", value: "the account", category: "ENTITY" as const }]
      const { value } = yield* skill.extractFacts({
        conversationId,
        text: input(null, turns),
        maxTokens: 300,
        existingFacts: existing
      })
      const keys = value.facts.map((fact) => fact.key)
      assert.includeMembers(keys, ["id:acc-bff-30271", "id:ord-2024-88417", "amount:$1,240.00"])
      assert.isAbove(value.narrative.length, 0)
    })))

  it.effect.prop(
    "never passes the cap, whatever the text (exact counter)",
    {
      lines: fc.array(
        fc.tuple(fc.constantFrom("User", "Assistant", "Tool (lookup)"), fc.string({ minLength: 1, maxLength: 400 })),
        { minLength: 1, maxLength: 20 }
      ),
      maxTokens: fc.integer({ min: 1, max: 300 })
    },
    ({ lines, maxTokens }) =>
      Effect.gen(function*() {
        const skill = yield* SkillService
        const counter = yield* TokenCounter
        const text = input(null, lines.map(([who, said]) => `${who}: ${said.replaceAll("\n", " ")}`))
        const { value } = yield* skill.summarize({ conversationId, text, maxTokens })
        assert.isAtMost(yield* counter.count(value), maxTokens)
      }).pipe(Effect.provide(ExtractiveSkill.layer.pipe(Layer.provideMerge(ExactTokenCounter.layer)))),
    { fastCheck: { numRuns: 200 } }
  )
})
