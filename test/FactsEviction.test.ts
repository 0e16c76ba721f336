/**
 * The offline facts of a support conversation: a key names its entity, names in prose and
 * conditions quoted word for word are facts, and a total is not keyed as its part.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import type { Fact } from "../src/domain/Fact.js"
import * as ExtractiveSkill from "../src/layers/skills/ExtractiveSkill.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { SkillService } from "../src/services/SkillService.js"
import { assistant, type Said, turnOf, user } from "./fixtures/said.js"

const conversationId = ConversationId.make("support")

const withSkill = <A, E>(effect: Effect.Effect<A, E, SkillService>) =>
  Effect.provide(effect, ExtractiveSkill.layer.pipe(Layer.provide(ApproximateTokenCounter.layer)))

/** The facts after folding `folds` one after the other, each into the facts of the ones before. */
const factsAfter = (folds: ReadonlyArray<ReadonlyArray<Said>>, maxFactTokens = 4000) =>
  withSkill(Effect.gen(function*() {
    const skill = yield* SkillService
    let facts: ReadonlyArray<Fact> = []
    let seq = 1
    for (const said of folds) {
      const { value } = yield* skill.extractFacts({
        conversationId,
        existingSummary: [],
        turns: [turnOf(conversationId, said, seq)],
        maxTokens: 400,
        maxFactTokens,
        existingFacts: facts
      })
      facts = value.facts
      seq += said.length
    }
    return facts
  }))

const keyOfValue = (facts: ReadonlyArray<Fact>, value: string): string | undefined =>
  facts.find((fact) => fact.value === value)?.key

describe("offline facts", () => {
  it.effect("two work orders are two entities, each under a key that names it", () =>
    Effect.gen(function*() {
      const facts = yield* factsAfter([
        [
          user("The dishwasher stopped draining again."),
          assistant("I opened work order WO-55210 for the dishwasher.")
        ],
        [
          user("Now the boiler is making a banging noise."),
          assistant("I opened work order WO-55342 for the boiler.")
        ]
      ])
      const first = keyOfValue(facts, "WO-55210")
      const second = keyOfValue(facts, "WO-55342")
      assert.isDefined(first, JSON.stringify(facts))
      assert.isDefined(second, JSON.stringify(facts))
      assert.notStrictEqual(first, second)
      assert.include(second ?? "", "boiler")
      const keys = facts.map((fact) => fact.key)
      assert.deepStrictEqual(keys.filter((key, i) => keys.indexOf(key) !== i), [], "a key held twice")
    }))

  it.effect("a yearly total is not keyed as the monthly part", () =>
    Effect.gen(function*() {
      const facts = yield* factsAfter([[assistant("The rent is $1,850.00 a month, so $22,200.00 for the year.")]])
      const monthly = keyOfValue(facts, "$1,850.00")
      const yearly = keyOfValue(facts, "$22,200.00")
      assert.isDefined(monthly, JSON.stringify(facts))
      assert.isDefined(yearly, JSON.stringify(facts))
      assert.notStrictEqual(monthly, yearly)
      assert.include(yearly ?? "", "year")
    }))

  it.effect("names in prose, numbered places, and conditions word for word are facts", () =>
    Effect.gen(function*() {
      const facts = yield* factsAfter([[
        assistant("Your account manager is Priya Raman."),
        user("I moved to Unit 4B and my mailbox number 217 takes parcels."),
        assistant("The discount applies as long as the contract is signed by June 30, 2026.")
      ]])
      const values = facts.map((fact) => fact.value)
      assert.includeMembers(
        values,
        ["Priya Raman", "Unit 4B", "mailbox number 217"],
        JSON.stringify(facts)
      )
      const condition = facts.find((fact) => fact.category === "CONDITION")
      assert.include(condition?.value ?? "", "as long as the contract is signed by June 30, 2026")
    }))
})
