import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import type { Message } from "../src/domain/Message.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"
import { conversation, messagesOf } from "./fixtures/arbitraries.js"
import { memoryWith } from "./fixtures/layers.js"

const tokens = (messages: ReadonlyArray<Message>) => messages.reduce((n, m) => n + m.tokenCount, 0)

describe("SlidingWindowStrategy", () => {
  it.effect.prop(
    "the window fits the budget, keeps system messages and whole newest turns, and accounts for the rest",
    // Up to 40 turns of about 70 tokens and budgets up to 1200: in about half the runs the window
    // leaves turns out, in a fifth it shows them all, in a fifth not even the newest one fits.
    {
      spec: conversation({ maxTurns: 40 }),
      budget: fc.integer({ min: 1, max: 1200 })
    },
    ({ budget, spec }) =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const stored = yield* memory.addMessages("prop", messagesOf(spec))
        const context = yield* memory.getContext("prop")

        // Group the stored messages by the turns the generator built.
        const system = stored.slice(0, spec.system.length)
        const turns: Array<ReadonlyArray<Message>> = []
        let offset = spec.system.length
        for (const turn of spec.turns) {
          turns.push(stored.slice(offset, offset + turn.length))
          offset += turn.length
        }
        const systemTokens = tokens(system)

        // Leading system messages are always kept, whole.
        assert.deepStrictEqual(context.system, system)
        // The budget holds whenever the protected part fits.
        if (systemTokens <= budget) assert.isAtMost(context.tokenCount, budget)
        assert.strictEqual(context.tokenCount, systemTokens + tokens(context.recent))

        // The recent part is exactly the newest `turnsShown` turns, verbatim.
        const shown = turns.slice(turns.length - context.turnsShown)
        assert.deepStrictEqual(context.recent, shown.flat())

        // The newest K turns are there whenever they fit, for every K.
        for (let k = 1; k <= turns.length; k++) {
          const newest = turns.slice(turns.length - k).flat()
          if (systemTokens + tokens(newest) <= budget) assert.isAtLeast(context.turnsShown, k)
        }
        // The window is maximal: the next older turn would not have fitted.
        const nextOlder = turns[turns.length - context.turnsShown - 1]
        if (nextOlder !== undefined) assert.isAbove(context.tokenCount + tokens(nextOlder), budget)

        // No tool call is separated from its result.
        const shownCalls = new Set(context.recent.flatMap((m) => (m.metadata.toolCalls ?? []).map((c) => c.id)))
        const shownResults = new Set(context.recent.flatMap((m) => m.metadata.toolCallId ?? []))
        assert.deepStrictEqual([...shownResults].filter((id) => !shownCalls.has(id)), [])
        assert.deepStrictEqual([...shownCalls].filter((id) => !shownResults.has(id)), [])

        // Every message is shown or counted as omitted.
        assert.strictEqual(context.system.length + context.recent.length + context.messagesOmitted, stored.length)
        assert.strictEqual(context.turnsShown + context.turnsOmitted, turns.length)
        assert.strictEqual(context.summary, null)
        assert.strictEqual(context.summarizedUpTo, 0)
      }).pipe(
        Effect.provide(memoryWith(SlidingWindowStrategy.layer({ tokenBudget: budget })))
      ),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect("a conversation that opens without a user message counts its opening as a turn", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("opening", [
        { role: "system", content: "sys" },
        { role: "assistant", content: "Welcome! ".repeat(40) },
        ...Array.from({ length: 200 }, (_, i) => ({
          role: i % 2 === 0 ? "user" as const : "assistant" as const,
          content: `message ${i} `.repeat(10)
        }))
      ])
      const context = yield* memory.getContext("opening")
      assert.strictEqual(context.turnsShown + context.turnsOmitted, 101)
      assert.strictEqual(context.system.length + context.recent.length + context.messagesOmitted, 202)
      assert.isAbove(context.turnsOmitted, 0)
    }).pipe(Effect.provide(memoryWith(SlidingWindowStrategy.layer({ tokenBudget: 500 })))))

  it.effect("when the system messages alone exceed the budget, no turn is shown and they are kept", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("big-system", [
        { role: "system", content: "s".repeat(400) },
        { role: "user", content: "hello" },
        { role: "assistant", content: "hi" }
      ])
      const context = yield* memory.getContext("big-system")
      assert.strictEqual(context.system.length, 1)
      assert.deepStrictEqual([context.turnsShown, context.turnsOmitted, context.messagesOmitted], [0, 1, 2])
    }).pipe(Effect.provide(memoryWith(SlidingWindowStrategy.layer({ tokenBudget: 50 })))))
})
