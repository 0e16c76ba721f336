/**
 * The offline facts of a support conversation: a key names its entity, a superseded or corrected
 * value leaves, names in tool results and conditions quoted word for word are facts, a total is
 * not keyed as its part, and every kind of value keeps its share of a full cap.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, FastCheck as fc, Layer } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { DefaultMaxFacts, type Fact } from "../src/domain/Fact.js"
import { Message, type MessageMetadata, type Role } from "../src/domain/Message.js"
import type { Turn } from "../src/domain/Turn.js"
import * as ExtractiveSkill from "../src/layers/skills/ExtractiveSkill.js"
import { evictionOrder, type FactKind, kindOf, shares } from "../src/layers/skills/internal/extractive/eviction.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { SkillService } from "../src/services/SkillService.js"

const conversationId = ConversationId.make("support")

interface Said {
  readonly role: Role
  readonly content: string
  readonly metadata?: MessageMetadata | undefined
}

const user = (content: string): Said => ({ role: "user", content })
const assistant = (content: string): Said => ({ role: "assistant", content })
const tool = (name: string, result: unknown): Said => ({
  role: "tool",
  content: JSON.stringify(result),
  metadata: { toolName: name, contentFormat: "json" }
})

/** The messages as one turn, stored from `firstSeq` on. */
const turnOf = (said: ReadonlyArray<Said>, firstSeq: number): Turn => {
  const messages = said.map((m, i) =>
    new Message({
      conversationId,
      seq: firstSeq + i,
      role: m.role,
      content: m.content,
      metadata: m.metadata ?? {},
      tokenCount: Math.ceil(m.content.length / 4) + 4,
      createdAt: DateTime.unsafeMake(0)
    })
  )
  return {
    messages,
    tokenCount: messages.reduce((n, m) => n + m.tokenCount, 0),
    firstSeq,
    lastSeq: firstSeq + messages.length - 1
  }
}

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
        turns: [turnOf(said, seq)],
        maxTokens: 400,
        maxFactTokens,
        existingFacts: facts
      })
      facts = value.facts
      seq += said.length
    }
    return facts
  }))

const kinds: ReadonlyArray<FactKind> = ["identifier", "amount", "date", "name", "condition", "goal", "other"]

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

  it.effect("a corrected phone number and a cancelled visit leave, and do not come back", () =>
    Effect.gen(function*() {
      const facts = yield* factsAfter([
        [user("My contact number is 555-014-7790."), assistant("Visit VIS-40211 is booked for May 3.")],
        [
          user("Sorry, typo: my contact number is 555-014-7709, not 555-014-7790."),
          assistant("Visit VIS-40211 has been cancelled; the new visit is VIS-40388 on May 9.")
        ],
        [user("Thanks, the engineer can ring before arriving.")]
      ])
      const values = facts.map((fact) => fact.value)
      assert.include(values, "555-014-7709", JSON.stringify(facts))
      assert.notInclude(values, "555-014-7790")
      assert.include(values, "VIS-40388")
      assert.notInclude(values, "VIS-40211")
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

  it.effect("names in a tool's record and prose, numbered places, and conditions word for word are facts", () =>
    Effect.gen(function*() {
      const facts = yield* factsAfter([[
        tool("lookup_visit", { technician: "Luis Ortega", visitId: "VIS-40388" }),
        assistant("Your account manager is Priya Raman."),
        user("I moved to Unit 4B and my mailbox number 217 takes parcels."),
        assistant("The discount applies as long as the contract is signed by June 30, 2026.")
      ]])
      const values = facts.map((fact) => fact.value)
      assert.includeMembers(
        values,
        ["Luis Ortega", "Priya Raman", "Unit 4B", "mailbox number 217"],
        JSON.stringify(facts)
      )
      const condition = facts.find((fact) => fact.category === "CONDITION")
      assert.include(condition?.value ?? "", "as long as the contract is signed by June 30, 2026")
    }))

  it.effect("each kind keeps its share of a full cap, the newest of a kind first", () =>
    Effect.gen(function*() {
      // Far more identifiers than the cap holds, said last; a few of every other kind.
      const others: Array<Said> = [
        user("My goal is to have the line working before my exams."),
        user("We agreed to keep the old router until the new one arrives."),
        assistant("The refund is paid only if an engineer confirms the fault by March 20."),
        assistant("Your engineer is Marta Kowalski."),
        assistant("The billing contact is Daniel Osei."),
        assistant("The first visit is on March 3."),
        assistant("The follow-up visit is on March 17."),
        assistant("The deposit is $120.00."),
        assistant("The setup fee is $49.00.")
      ]
      const flood = Array.from({ length: 60 }, (_, i): Said =>
        assistant(`The ticket for the outage report is TCK-${70100 + i}.`))
      const facts = yield* factsAfter([others, flood], 100_000)
      assert.strictEqual(facts.length, DefaultMaxFacts)
      const count = (kind: FactKind) =>
        facts.filter((fact) => kindOf(fact) === kind).length
      assert.isAtLeast(count("date"), 2, JSON.stringify(facts))
      assert.isAtLeast(count("name"), 2)
      assert.isAtLeast(count("condition"), 2)
      assert.isAtLeast(count("goal"), 1)
      assert.isAtLeast(count("amount"), 2)
      // The identifiers kept are the newest ones said.
      const kept = facts.filter((fact) => kindOf(fact) === "identifier").map((fact) => fact.value)
      assert.include(kept, "TCK-70159")
      assert.notInclude(kept, "TCK-70100")
    }))

  it.prop(
    "every cap keeps each kind's share, or all of a kind with fewer",
    {
      items: fc.array(
        fc.record({
          kind: fc.constantFrom(...kinds),
          worth: fc.double({ min: 0, max: 10, noNaN: true })
        }),
        { minLength: 1, maxLength: 80 }
      )
    },
    ({ items }) => {
      const ranked = items.map((item, i) => ({
        ...item,
        fact: { key: `fact_${i}`, value: String(i), category: "GENERAL" as const }
      }))
      const kindOfKey = new Map(ranked.map((item) => [item.fact.key, item.kind]))
      const order = evictionOrder(ranked)
      assert.strictEqual(order.length, ranked.length)
      for (let cap = 1; cap <= order.length; cap++) {
        const kept = order.slice(order.length - cap)
        for (const kind of kinds) {
          const available = ranked.filter((item) => item.kind === kind).length
          const held = kept.filter((fact) => kindOfKey.get(fact.key) === kind).length
          assert.isAtLeast(held, Math.min(available, Math.floor(shares[kind] * cap)), `${kind} at cap ${cap}`)
        }
      }
    },
    { fastCheck: { numRuns: 60 } }
  )
})
