/**
 * The offline extractive skill: deterministic, keeps the sentences that carry identifiers,
 * amounts, dates and decisions over small talk, and never passes the cap.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, FastCheck as fc, Layer } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import type { Fact } from "../src/domain/Fact.js"
import { factsText } from "../src/domain/internal/contextText.js"
import { factsNamedIn } from "../src/domain/internal/facts.js"
import type { Role } from "../src/domain/Message.js"
import * as ExtractiveSkill from "../src/layers/skills/ExtractiveSkill.js"
import { factsWorthTheirRoom } from "../src/layers/skills/internal/extractive/narrative.js"
import { spans } from "../src/layers/skills/internal/extractive/salient.js"
import { statementsOf } from "../src/layers/skills/internal/extractive/statements.js"
import * as Prompts from "../src/layers/skills/internal/prompts.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import { SkillService } from "../src/services/SkillService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { assistant, type Said, tool, turnOf, user } from "./fixtures/said.js"

const conversationId = ConversationId.make("extractive")

/**
 * The data of a skill call: the narrative so far, if any, and the messages as one turn (the skill
 * reads them in order, whatever the turns).
 */
const input = (existing: string | null, said: ReadonlyArray<Said>) => ({
  existingSummary: existing === null
    ? { _tag: "None" as const }
    : { _tag: "Narrative" as const, text: existing },
  turns: said.length === 0 ? [] : [turnOf(conversationId, said, 1)]
})

const turns = [
  user("Hi there, hope your week is going well."),
  assistant("Thanks, all good here. How can I help today?"),
  user("Please ship order ORD-2024-88417 to 88 Halvorsen Way instead. We agreed on freight of $1,240.00."),
  assistant("Done. Delivery is confirmed for 2024-04-18 between 07:00 and 11:00."),
  user("Great, the weather has been lovely lately."),
  assistant("It has! Anything else?"),
  user("We decided to go with the R-290 units; the budget is $160,000 and intake starts on June 3.")
]

/** A booking in another domain: the check-in moves, a second booking is made, a condition is set. */
const travel = [
  user("Hi! I'd like to book the lake cabin, check-in on March 9 please."),
  assistant("Done: your confirmation code is HX-88120, and the deposit is $120.00."),
  user("Great, thanks."),
  assistant("You're welcome."),
  user("Could we move it? Please make the check-in on March 11 instead."),
  tool("bookings", { code: "HX-88120", room: { name: "Lake Cabin", beds: 2 } }),
  assistant("Updated: check-in on March 11, same confirmation code HX-88120."),
  user("Also book the boat for Saturday; we take it only if the forecast is dry."),
  assistant("The boat is reserved under code HX-90233.")
]

const withSkill = <A, E>(effect: Effect.Effect<A, E, SkillService | TokenCounter>) =>
  Effect.provide(effect, ExtractiveSkill.layer.pipe(Layer.provideMerge(ApproximateTokenCounter.layer)))

describe("ExtractiveSkill", () => {
  it.effect("keeps identifiers, amounts, dates and decisions, and drops small talk", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const { skillId, value } = yield* skill.summarize({ conversationId, ...input(null, turns), maxTokens: 200 })
      for (const kept of ["ORD-2024-88417", "$1,240.00", "2024-04-18", "R-290", "$160,000", "June 3"]) {
        assert.include(value, kept)
      }
      assert.notInclude(value, "weather")
      assert.notInclude(value, "hope your week")
      assert.strictEqual(skillId, "extractive/summarize@5")
    })))

  it.effect("turns said on several days: each day's lines under its date heading, and a heading dates the lines of a later call", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const counter = yield* TokenCounter
      const day = (date: string) => DateTime.unsafeMake(`${date}T18:00:00Z`)
      const days = [
        turnOf(
          conversationId,
          [user("My boiler is playing up again, the engineer quoted $340.")],
          1,
          day("2025-01-05")
        ),
        turnOf(
          conversationId,
          [user("The boiler finally died; the new one is booked for January 14.")],
          2,
          day("2025-01-09")
        )
      ]
      const first = yield* skill.summarize({
        conversationId,
        existingSummary: { _tag: "None" },
        turns: days,
        maxTokens: 200
      })
      assert.strictEqual(
        first.value,
        [
          "[2025-01-05]",
          "User: My boiler is playing up again, the engineer quoted $340.",
          "[2025-01-09]",
          "User: The boiler finally died; the new one is booked for January 14."
        ].join("\n")
      )
      // One day read alone, after a summary whose lines are dated: the old lines keep their day,
      // and the new ones get theirs.
      const later = turnOf(
        conversationId,
        [user("We agreed the deposit of $90 is due on February 2.")],
        3,
        day("2025-01-20")
      )
      const next = yield* skill.extractFacts({
        conversationId,
        existingSummary: { _tag: "Narrative", text: first.value },
        turns: [later],
        maxTokens: 200,
        existingFacts: []
      })
      const lines = next.value.narrative.split("\n")
      assert.includeMembers(lines, ["[2025-01-05]", "[2025-01-20]"])
      assert.isBelow(lines.indexOf("[2025-01-05]"), lines.findIndex((line) => line.includes("$340")))
      assert.strictEqual(
        lines[lines.indexOf("[2025-01-20]") + 1],
        "User: We agreed the deposit of $90 is due on February 2."
      )
      // The headings are counted: under a tight cap, the narrative still fits.
      for (const maxTokens of [20, 30, 45, 60]) {
        const capped = yield* skill.summarize({
          conversationId,
          existingSummary: { _tag: "None" },
          turns: days,
          maxTokens
        })
        assert.isAtMost(yield* counter.count(capped.value), maxTokens)
        // A heading is never written without a line under it.
        const written = capped.value.split("\n")
        written.forEach((line, i) => {
          if (/^\[\d{4}-\d{2}-\d{2}\]$/.test(line)) assert.notMatch(written[i + 1] ?? "[", /^\[/)
        })
      }
      // Turns of one day, and no dated summary: no heading.
      const oneDay = yield* skill.summarize({ conversationId, ...input(null, turns), maxTokens: 200 })
      assert.notMatch(oneDay.value, /^\[\d{4}/m)
    })))

  it.effect("sharing their room with the narrative: the newest fact of each kind stays, a fact a line says with more goes to the line, a fact that says it in fewer tokens stays", () =>
    withSkill(Effect.gen(function*() {
      const counter = yield* TokenCounter
      const fresh = (said: Said) => statementsOf(input(null, [said])).fresh
      const engineer: Fact = { key: "engineer", value: "Dara Whelan", category: "ENTITY" }
      const order: Fact = { key: "order_id", value: "ORD-2024-88417", category: "ENTITY" }
      const freight: Fact = { key: "freight", value: "$1,240.00", category: "NUMERIC" }
      const line = fresh(user("Dara Whelan confirmed the delivery to 88 Halvorsen Way on 2024-04-18."))
      const newest = yield* counter.countMessage({ content: factsText([order, freight]) })
      const lineTokens = (yield* counter.count(line[0]?.line ?? "")) + 1
      // Room for the line and the newest fact of each kind, not for a fact the line says.
      const tight = yield* factsWorthTheirRoom(counter, [engineer, order, freight], line, {
        shared: newest + lineTokens + 2,
        facts: 200
      })
      assert.deepStrictEqual(tight, { carried: [order, freight], spare: [] })
      // Room to spare: the fact the line says stays too.
      const roomy = yield* factsWorthTheirRoom(counter, [engineer, order, freight], line, { shared: 400, facts: 200 })
      assert.deepStrictEqual(roomy, { carried: [order, freight], spare: [engineer] })
      // Within the facts' own cap, whatever the shared room.
      const capped = yield* factsWorthTheirRoom(counter, [engineer, order, freight], line, {
        shared: 400,
        facts: newest + 2
      })
      assert.deepStrictEqual(capped, { carried: [order, freight], spare: [] })
      // A value a long line says alone: the fact says it in fewer tokens, and stays over the line.
      const reference: Fact = { key: "reference", value: "REF-77120", category: "GENERAL" }
      const long = fresh(
        user(
          "If I remember it right after all this time and all those moves between flats, offices and storage units, the reference written on the old paperwork was REF-77120."
        )
      )
      const kept = yield* factsWorthTheirRoom(counter, [reference], long, { shared: 400, facts: 200 })
      assert.deepStrictEqual(kept, { carried: [reference], spare: [] })
    })))

  it.effect("with shared room, the narrative takes what the facts leave, beyond its own cap; without, its own cap", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const counter = yield* TokenCounter
      const call = (maxSharedTokens: number | undefined) =>
        skill.extractFacts({
          conversationId,
          ...input(null, turns),
          maxTokens: 30,
          maxFactTokens: 200,
          maxSharedTokens,
          existingFacts: []
        })
      const size = (value: { readonly facts: ReadonlyArray<Fact>; readonly narrative: string }) =>
        Effect.zipWith(
          counter.count(value.narrative),
          value.facts.length === 0 ? Effect.succeed(0) : counter.countMessage({ content: factsText(value.facts) }),
          (narrative, facts) => ({ narrative, facts })
        )
      const shared = yield* size((yield* call(160)).value)
      assert.isAbove(shared.narrative, 30)
      assert.isAtMost(shared.narrative + shared.facts, 160)
      const apart = yield* size((yield* call(undefined)).value)
      assert.isAtMost(apart.narrative, 30)
    })))

  it.effect("is deterministic, and folds the existing summary with the new turns", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const data = input("User: The account is ACC-BFF-30271.", turns)
      const first = yield* skill.summarize({ conversationId, ...data, maxTokens: 300 })
      const second = yield* skill.summarize({ conversationId, ...data, maxTokens: 300 })
      assert.strictEqual(first.value, second.value)
      assert.include(first.value, "ACC-BFF-30271")
      assert.include(first.value, "ORD-2024-88417")
    })))

  it.effect("ranks by what a line adds per token, and writes a tool's JSON as fields, never as JSON", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const note = "the unit was inspected and the crate was found in good order with no visible damage ".repeat(4)
      const dump = tool("inspect", { note, skus: ["SKU-1000-X", "SKU-1001-X", "SKU-1002-X"] })
      const ticket = assistant("Your ticket is TCK-70962.")
      const { value } = yield* skill.summarize({ conversationId, ...input(null, [dump, ticket]), maxTokens: 40 })
      // The ticket first (a whole identifier in a short statement), then what room is left.
      assert.include(value, "TCK-70962")
      assert.notMatch(value, /[{}[\]"]/)
      assert.notInclude(value, "crate was found")
    })))

  it.effect("a tool's field says which tool, and stays a field when the summary is read again", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const lookup = tool("lookup_order", { eta: "2024-04-10" })
      const first = yield* skill.summarize({ conversationId, ...input(null, [lookup]), maxTokens: 40 })
      assert.strictEqual(first.value, "lookup_order: eta 2024-04-10")
      // Read back beside a statement of equal cost, the field is worth half and gives way.
      const said = assistant("Delivery is 2024-04-18.")
      const second = yield* skill.summarize({ conversationId, ...input(first.value, [said]), maxTokens: 10 })
      assert.strictEqual(second.value, "Delivery is 2024-04-18.")
    })))

  it.effect("keeps a value said again once", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const lines = [
        user("The booking reference is BK-4471-Q."),
        assistant("Reference BK-4471-Q, noted."),
        assistant("Your reference stays BK-4471-Q."),
        assistant("Two nights from March 9, 2025 at $412.80.")
      ]
      const { value } = yield* skill.summarize({ conversationId, ...input(null, lines), maxTokens: 200 })
      assert.strictEqual(value.split("BK-4471-Q").length - 1, 1, value)
      assert.include(value, "March 9, 2025")
      assert.include(value, "$412.80")
    })))

  it.effect("reads the turns as stored: a tool call is never quoted, its result is read as the data it holds", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const counter = yield* TokenCounter
      const data = input(null, [
        user("Is ORD-2024-88417 in stock?"),
        assistant("Let me check both series.", {
          toolCalls: [{ id: "c1", name: "check_inventory", params: { skus: ["PF-404M", "PF-290M"], note: "[x]" } }]
        }),
        { ...tool("check_inventory", { sku: "PF-290M", onHand: "14 units" }), metadata: { toolCallId: "c1" } },
        assistant("We have 14 units of PF-290M.")
      ])
      const { usage, value } = yield* skill.summarize({ conversationId, ...data, maxTokens: 200 })
      assert.include(value, "ORD-2024-88417")
      assert.include(value, "14 units")
      assert.notInclude(value, "[calls")
      assert.notMatch(value, /[{}"]/)
      // Usage is what a model skill would report for the same call: the tokens of its input text.
      assert.strictEqual(usage.inputTokens, yield* counter.count(Prompts.summaryInput(data)))
    })))

  it.effect("the parts of the existing summary (two layers to merge) are read as one summary", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const { value } = yield* skill.summarize({
        conversationId,
        existingSummary: {
          _tag: "Layers",
          older: "The user ordered ORD-2024-77001 on May 2.",
          newer: "Ticket TCK-70962 covers the damaged crate."
        },
        turns: [],
        maxTokens: 200
      })
      assert.include(value, "ORD-2024-77001")
      assert.include(value, "TCK-70962")
    })))

  it.effect("facts: keys from the words around a value, the latest value of a key wins, one fact per value", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const counter = yield* TokenCounter
      const first = yield* skill.extractFacts({
        conversationId,
        ...input(null, travel.slice(0, 4)),
        maxTokens: 400,
        existingFacts: []
      })
      const byKey = (facts: ReadonlyArray<Fact>) => new Map(facts.map((fact) => [fact.key, fact.value]))
      const before = byKey(first.value.facts)
      assert.strictEqual(before.get("checkin_date"), "March 9", JSON.stringify([...before]))
      assert.strictEqual(before.get("deposit"), "$120.00", JSON.stringify([...before]))
      assert.strictEqual(before.get("confirmation_code"), "HX-88120", JSON.stringify([...before]))
      const later = input(null, travel.slice(4))
      const second = yield* skill.extractFacts({
        conversationId,
        ...later,
        maxTokens: 400,
        existingFacts: first.value.facts
      })
      // Usage is what a model skill would read: the known facts these turns name, and the input text.
      const named = factsNamedIn(first.value.facts, later.turns)
      assert.isAbove(named.length, 0)
      assert.isBelow(named.length, first.value.facts.length)
      assert.strictEqual(
        second.usage.inputTokens,
        (yield* counter.count(Prompts.existingFactsSection(named))) +
          (yield* counter.count(Prompts.summaryInput(later)))
      )
      const after = byKey(second.value.facts)
      // The check-in moved: one fact, the new value; the code and the deposit stay.
      assert.strictEqual(after.get("checkin_date"), "March 11", JSON.stringify([...after]))
      assert.notInclude([...after.values()], "March 9")
      assert.strictEqual(after.get("deposit"), "$120.00")
      // A second booking code is another entity, not a new value of the first.
      assert.includeMembers([...after.values()], ["HX-88120", "HX-90233"])
      for (const fact of second.value.facts) {
        assert.match(fact.key, /^[a-z][a-z0-9_]*$/)
        assert.notMatch(fact.value, /[{}"]/)
      }
      // The user's condition is a fact of its own.
      assert.isTrue(second.value.facts.some((fact) => fact.category === "CONDITION" && fact.value.includes("only if")))
      const values = second.value.facts.map((fact) => fact.value.toLowerCase())
      assert.deepStrictEqual(values.filter((v, i) => values.indexOf(v) !== i), [])
    })))

  it.effect("facts alone: at maxTokens 0 the same facts, no narrative, and no narrative in the usage", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const call = (maxTokens: number) =>
        skill.extractFacts({
          conversationId,
          ...input(null, travel),
          maxTokens,
          maxFactTokens: 4000,
          existingFacts: []
        })
      const [full, alone] = [yield* call(400), yield* call(0)]
      assert.isNotEmpty(full.value.narrative)
      assert.strictEqual(alone.value.narrative, "")
      assert.deepStrictEqual(alone.value.facts, full.value.facts)
      assert.isBelow(alone.usage.outputTokens, full.usage.outputTokens)
    })))

  it.effect("facts: the most important survive a small cap (an identifier over a time of day)", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const { value } = yield* skill.extractFacts({
        conversationId,
        ...input(null, [
          user("The confirmation code is HX-88120."),
          assistant("Breakfast is served from 7:30 am."),
          assistant("Checkout is at 11:00 am.")
        ]),
        maxTokens: 40,
        existingFacts: []
      })
      const values = value.facts.map((fact) => fact.value)
      assert.include(values, "HX-88120")
      assert.notInclude(values, "from 7:30 am")
    })))

  it.effect("facts: removed names the known facts whose value the turns cancel, not one said again or left out for room", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const known: ReadonlyArray<Fact> = [
        { key: "order_id", value: "ORD-5521", category: "ENTITY" },
        { key: "worktop_price", value: "£1,240.00", category: "NUMERIC" },
        { key: "breakfast_time", value: "from 7:30 am", category: "STATE" }
      ]
      const { value } = yield* skill.extractFacts({
        conversationId,
        ...input(null, [
          user("Please cancel order ORD-5521. The confirmation code HX-88120 stays."),
          assistant("Done: ORD-5521 is cancelled. The oak worktop was £1,240.00.")
        ]),
        maxTokens: 400,
        maxFactTokens: 20,
        existingFacts: known
      })
      assert.deepStrictEqual(value.removed, ["order_id"])
      // The cap left the price, said again, and the breakfast time out: neither is removed.
      for (const key of ["worktop_price", "breakfast_time"]) assert.notInclude(value.facts.map((fact) => fact.key), key)
    })))

  it.effect("facts: an identifier a tool's record names takes the record's name", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const { value } = yield* skill.extractFacts({
        conversationId,
        ...input(null, [
          tool("lookup_ticket", { claimId: "DMG-2207", status: "PENDING" }),
          assistant("I'll follow up on DMG-2207 today.")
        ]),
        maxTokens: 200,
        existingFacts: []
      })
      assert.deepStrictEqual(value.facts.map((fact) => [fact.key, fact.value]), [["claim_id", "DMG-2207"]])
    })))

  it.effect("a name said alone is worth a line where the facts carry the values (extract-facts), not in a summary alone", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const said = input(null, [
        user("The refund of $42.00 went to my card."),
        assistant("Good to hear."),
        user("my neighbour Gwenllian lent us her ladder"),
        assistant("That was kind of her.")
      ])
      const summary = yield* skill.summarize({ conversationId, ...said, maxTokens: 400 })
      const memory = yield* skill.extractFacts({ conversationId, ...said, maxTokens: 400, existingFacts: [] })
      assert.include(summary.value, "$42.00")
      assert.notInclude(summary.value, "Gwenllian")
      assert.include(memory.value.narrative, "Gwenllian")
    })))

  it.effect("facts: a date written day first, a national phone number and a network address are values", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const output = yield* skill.extractFacts({
        conversationId,
        ...input(null, [
          user("The engineer will ring my mobile, 07700 900461, on the day."),
          assistant("Noted. Your static IP is 203.0.113.58, and the new hub arrives on Saturday 30 May.")
        ]),
        maxTokens: 400,
        existingFacts: []
      })
      const values = output.value.facts.map((fact) => fact.value)
      for (const value of ["07700 900461", "203.0.113.58", "Saturday 30 May"]) {
        assert.isTrue(values.includes(value), `${value} in ${JSON.stringify(output.value.facts)}`)
      }
      assert.strictEqual(output.skillId, "extractive/extract-facts@6")
    })))

  it.effect("facts: values no word names are facts of their own, and the first a cap drops", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const extract = (lines: ReadonlyArray<Said>, maxTokens: number) =>
        Effect.map(
          skill.extractFacts({ conversationId, ...input(null, lines), maxTokens, existingFacts: [] }),
          ({ value }) => value.facts.map((fact) => fact.value)
        )
      // Two dates said bare are two dates, not one date changing.
      const dates = yield* extract([assistant("It's June 12."), user("Or June 13.")], 200)
      assert.includeMembers(dates, ["June 12", "June 13"])
      // Under a cap that holds one fact, the named amount stays, though the bare one came later.
      const capped = yield* extract([assistant("The freight charge is $1,240.00."), assistant("That's $85.00.")], 30)
      assert.deepStrictEqual(capped, ["$1,240.00"])
    })))

  it.effect.prop(
    "never passes the cap, whatever the text (exact counter)",
    {
      lines: fc.array(
        fc.tuple(fc.constantFrom<Role>("user", "assistant", "tool"), fc.string({ minLength: 1, maxLength: 400 })),
        { minLength: 1, maxLength: 20 }
      ),
      maxTokens: fc.integer({ min: 1, max: 300 })
    },
    ({ lines, maxTokens }) =>
      Effect.gen(function*() {
        const skill = yield* SkillService
        const counter = yield* TokenCounter
        const data = input(
          null,
          lines.map(([role, content]) => ({ role, content, metadata: role === "tool" ? { toolName: "lookup" } : {} }))
        )
        const { value } = yield* skill.summarize({ conversationId, ...data, maxTokens })
        assert.isAtMost(yield* counter.count(value), maxTokens)
      }).pipe(Effect.provide(ExtractiveSkill.layer.pipe(Layer.provideMerge(ExactTokenCounter.layer)))),
    { fastCheck: { numRuns: 200 } }
  )
})

describe("salient spans", () => {
  const found = (text: string) => spans(text).map((s) => [s.kind, s.text])

  it("a quantity's number holds commas only between digits; a name with a number keeps it", () => {
    assert.deepStrictEqual(found("Deliver to Dock 4, before noon."), [["name", "Dock 4"]])
    assert.deepStrictEqual(found("We need 18,000 square feet, and 3, maybe 4 pallets."), [
      ["quantity", "18,000 square feet"],
      ["quantity", "4 pallets"]
    ])
  })

  it("formats of other places and endings: a local number, the period of a.m., a name after a contraction", () => {
    assert.deepStrictEqual(found("Her direct line is (020) 7946 0588."), [["phone", "(020) 7946 0588"]])
    assert.deepStrictEqual(found("Leaving at 8:15 a.m. on October 14."), [["time", "8:15 a.m."], [
      "date",
      "October 14"
    ]])
    assert.deepStrictEqual(found("It's Bramble & Thyme, thanks Graham Okonjo."), [
      ["name", "Bramble & Thyme"],
      ["name", "Graham Okonjo"]
    ])
    assert.deepStrictEqual(found("Sorry for the 20-minute delay."), [["quantity", "20-minute"]])
    // A code's tail counts nothing: "R-290 PF-290" is two codes, not 290 of PF-290.
    assert.deepStrictEqual(found("The R-290 PF-290 series, four PF-290M."), [
      ["code", "R-290"],
      ["code", "PF-290"],
      ["quantity", "four PF-290M"]
    ])
  })

  it("an identifier with a run of four digits names a record; a shorter one is a code (a model, a room)", () => {
    assert.deepStrictEqual(found("Ticket TCK-70815 covers the CX-7 controller in room G-04 on PO-BFF-7719."), [
      ["identifier", "TCK-70815"],
      ["code", "CX-7"],
      ["code", "G-04"],
      ["identifier", "PO-BFF-7719"]
    ])
  })

  it("a date written day first or as a month and year, a national number with its trunk 0, a network address", () => {
    assert.deepStrictEqual(
      found("Moving on Friday 29 May; the contract ends 23 Apr 2028, the tea is on the 3rd of June."),
      [
        ["date", "Friday 29 May"],
        ["date", "23 Apr 2028"],
        ["date", "3rd of June"]
      ]
    )
    // A year after a month is not its day: "Apr 2028" is no "Apr 20", nor a name.
    assert.deepStrictEqual(found("Valid until Apr 2028, renewed May 20, 2026."), [
      ["date", "Apr 2028"],
      ["date", "May 20, 2026"]
    ])
    assert.deepStrictEqual(found("Call 07700 900461 or the shop on 020 7946 0588."), [
      ["phone", "07700 900461"],
      ["phone", "020 7946 0588"]
    ])
    assert.deepStrictEqual(found("The static IP is 203.0.113.58, version 2.1 of the firmware."), [
      ["address", "203.0.113.58"]
    ])
  })

  it("a name said alone inside a sentence; not a word that opens one, nor one of a longer name", () => {
    assert.deepStrictEqual(found("Our instructor, Gwenllian, took us up to see Pixel in Leeds."), [
      ["name", "Gwenllian"],
      ["name", "Pixel"],
      ["name", "Leeds"]
    ])
    // A sentence's first word, a weekday, a pronoun and a name of two words are not names alone.
    assert.deepStrictEqual(found("Thanks. Lovely, see you on Friday with Graham Okonjo. I will."), [
      ["date", "Friday"],
      ["name", "Graham Okonjo"]
    ])
  })
})

describe("statements", () => {
  const intents = (text: string) => statementsOf(input(null, [user(text)])).fresh.map((statement) => statement.intent)

  it("a question in other words, or a reply too short to say what it is about, states no goal or decision", () => {
    assert.deepStrictEqual(intents("I want to know how much cardboard and wood we'll have to get rid of."), ["none"])
    assert.deepStrictEqual(intents("She's asking whether we want the coolers hung at 20 feet."), ["none"])
    assert.deepStrictEqual(intents("Agreed."), ["none"])
    assert.deepStrictEqual(intents("We want the wing running before the berry-season intake."), ["goal"])
  })

  it("a long sentence is shortened at clause breaks outside its spans, and a title's period ends no sentence", () => {
    const lines = (text: string) => statementsOf(input(null, [assistant(text)])).fresh.map((s) => s.text)
    const long = "The one thing that cannot move, as my director told me twice this week: everyone has to be back " +
      "at their desks before our release freeze, which starts on October 20, 2025."
    assert.match(lines(long)[0] ?? "", /October 20, 2025\.$/)
    assert.deepStrictEqual(lines("Reserved: the Garden Suite for Dr. Anand Mehta. He arrives at 6:40 p.m."), [
      "Reserved: the Garden Suite for Dr. Anand Mehta.",
      "He arrives at 6:40 p.m."
    ])
  })

  it("a long question shortened to its clauses is still a question", () => {
    const long =
      "Quick question from our controller, who asked me twice already today: does the discount apply if we " +
      "send the payment on day 30, or must it be received by then, as long as the invoice is right?"
    assert.deepStrictEqual(intents(long), ["none"])
  })
})

describe("narrative", () => {
  it.effect("a record's machine timestamp is worth less than a date that was said", () =>
    withSkill(Effect.gen(function*() {
      const skill = yield* SkillService
      const { value } = yield* skill.summarize({
        conversationId,
        ...input(null, [
          assistant("Stock was counted at 2024-03-25T15:42:00Z."),
          assistant("The order ships as 5 pallets.")
        ]),
        maxTokens: 14
      })
      assert.strictEqual(value, "The order ships as 5 pallets.")
    })))
})
