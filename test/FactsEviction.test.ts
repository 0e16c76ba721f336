/**
 * The offline facts of a support conversation: a key names its entity, names in prose and
 * conditions quoted word for word are facts, a total is not keyed as its part, a value cancelled,
 * corrected or superseded leaves, and each kind of value keeps its share of a full cap.
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
        existingSummary: { _tag: "None" },
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

  it.effect("a cancelled, corrected or superseded value is gone", () =>
    Effect.gen(function*() {
      const facts = yield* factsAfter([
        [user("Please book the installation."), assistant("Done: order ORD-88413, installation on 20 April.")],
        [user("My mobile is 555-014-7790.")],
        [user("The delivery date is May 3.")],
        [user("Cancel that order please."), assistant("Order ORD-88413 is cancelled with no fee.")],
        [user("Sorry, 555-014-7790 was a typo: it's 555-014-7709.")],
        [user("The delivery date is now May 10.")]
      ])
      const values = facts.map((fact) => fact.value).join(" | ")
      assert.notInclude(values, "ORD-88413", JSON.stringify(facts))
      assert.notInclude(values, "555-014-7790", JSON.stringify(facts))
      assert.include(values, "555-014-7709", JSON.stringify(facts))
      assert.notInclude(values, "May 3", JSON.stringify(facts))
      assert.include(values, "May 10", JSON.stringify(facts))
    }))

  it.effect("each kind keeps its share when the cap is full", () =>
    Effect.gen(function*() {
      const early: ReadonlyArray<ReadonlyArray<Said>> = [
        [assistant("Your engineer is Dara Whelan.")],
        [assistant("The survey is booked for Thursday, May 14.")],
        [assistant("The waiver holds as long as the router is returned within 30 days.")],
        [user("I want to move the line to the new flat before the end of June.")]
      ]
      // Then a long ledger: payments, each an identifier and an amount, worth more than a name and
      // said later.
      const ledger = Array.from({ length: 40 }, (_, i): ReadonlyArray<Said> => [
        assistant(`Payment PAY-${7001 + i} of £${i + 10}.40 has cleared.`)
      ])
      const capped = yield* factsAfter([...early, ...ledger], 160)
      const all = yield* factsAfter([...early, ...ledger])
      assert.isBelow(capped.length, all.length, "the cap is full")
      const values = capped.map((fact) => fact.value).join(" | ")
      const json = JSON.stringify(capped)
      assert.include(values, "Dara Whelan", json)
      assert.include(values, "Thursday, May 14", json)
      assert.isTrue(capped.some((fact) => fact.category === "CONDITION"), json)
      assert.isTrue(capped.some((fact) => fact.key.startsWith("user_goal")), json)
      // The rest of the cap goes to the payments, the newest first.
      assert.include(values, "PAY-7040", json)
      assert.notInclude(values, "PAY-7001", json)
    }))
})
