/**
 * The recall laws through the public service over one store (memory, PGlite, PostgreSQL): a turn
 * holding a unique identifier is recalled by a query naming it; recalled turns are whole, never
 * shown twice, never over the recall share of the budget; a cleared conversation recalls nothing;
 * and no turn of another conversation ever comes back, whatever words they share.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer } from "effect"
import type { MemoryContext } from "../../src/domain/MemoryContext.js"
import type { Message } from "../../src/domain/Message.js"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../../src/layers/skills/ScriptedSkill.js"
import type * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../../src/services/ChatMemoryService.js"
import * as SummarizationStrategy from "../../src/strategies/SummarizationStrategy.js"
import { freshId } from "../fixtures/messages.js"

const budget = 800
const share = 0.3

const chatter = (i: number, topic: string) => [
  { role: "user" as const, content: `Turn ${i}: any news on the ${topic} delivery and the shipment window?` },
  { role: "assistant" as const, content: `Turn ${i}: the ${topic} shipment is on schedule for the usual window.` }
]

const needle = (orderId: string) => [
  { role: "user" as const, content: "Which order is the cedar wardrobe?" },
  {
    role: "assistant" as const,
    content: "",
    metadata: { toolCalls: [{ id: `call-${orderId}`, name: "lookup", params: { item: "cedar wardrobe" } }] }
  },
  {
    role: "tool" as const,
    content: `{"order":"${orderId}"}`,
    metadata: { toolCallId: `call-${orderId}`, toolName: "lookup" }
  },
  { role: "assistant" as const, content: `The cedar wardrobe is order ${orderId}.` }
]

/** The recall laws that hold for any context asked with a query. */
const checkRecall = (context: MemoryContext, stored: ReadonlyArray<Message>) => {
  assert.isAtMost(context.tokenCount, budget)
  assert.isAtMost(context.recalledTokens, Math.floor(share * budget))
  const recentSeqs = new Set(context.recent.map((m) => m.seq))
  const seen = new Set<number>()
  for (const turn of context.recalled) {
    // Whole: from a user message to the next one, every stored message of the range, as stored.
    assert.strictEqual(turn.messages[0]?.role, "user")
    assert.deepStrictEqual(
      turn.messages.map((m) => [m.seq, m.content]),
      stored.filter((m) => m.seq >= turn.fromSeq && m.seq <= turn.toSeq).map((m) => [m.seq, m.content])
    )
    const next = stored.find((m) => m.seq === turn.toSeq + 1)
    assert.isTrue(next === undefined || next.role === "user")
    for (const message of turn.messages) {
      assert.isFalse(recentSeqs.has(message.seq), `seq ${message.seq} recalled and shown`)
      assert.isFalse(seen.has(message.seq), `seq ${message.seq} recalled twice`)
      seen.add(message.seq)
    }
  }
}

export const recallContract = <E>(name: string, repositoryLayer: Layer.Layer<Store.Ports, E>) =>
  layer(
    ChatMemory.layer.pipe(
      Layer.provideMerge(SummarizationStrategy.layer({
        kRawTurns: 2,
        tokenBudget: budget,
        summaryTokenCap: 120,
        recallTokenBudget: share,
        retries: 0
      })),
      Layer.provideMerge(ScriptedSkill.layer()),
      Layer.provideMerge(repositoryLayer),
      Layer.provideMerge(ApproximateTokenCounter.layer)
    )
  )(`recall: ${name}`, (it) => {
    it.effect("a turn holding a unique identifier is recalled, whole, by a query naming it", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const id = freshId("recall")
        yield* memory.addMessages(id, needle("ORD-2031-55501"))
        for (let i = 1; i <= 30; i++) yield* memory.addMessages(id, chatter(i, "oak"))
        yield* memory.awaitIdle(id)
        const context = yield* memory.getContext(id, { query: "what was the order number ORD-2031-55501?" })
        assert.deepStrictEqual(context.recalled.map((turn) => [turn.fromSeq, turn.toSeq]).slice(0, 1), [[1, 4]])
        checkRecall(context, yield* memory.getMessages(id, { limit: 1000 }))
        const [best] = yield* memory.searchMemory(id, "ORD-2031-55501")
        assert.deepStrictEqual([best?.fromSeq, best?.toSeq], [1, 4])
      }))

    it.effect("a cleared conversation recalls nothing", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const id = freshId("recall-cleared")
        yield* memory.addMessages(id, needle("ORD-2031-55502"))
        for (let i = 1; i <= 10; i++) yield* memory.addMessages(id, chatter(i, "oak"))
        yield* memory.clearMessages(id)
        assert.deepStrictEqual(yield* memory.searchMemory(id, "ORD-2031-55502"), [])
        // Written again, the conversation knows only what it holds now.
        for (let i = 1; i <= 10; i++) yield* memory.addMessages(id, chatter(i, "oak"))
        const context = yield* memory.getContext(id, { query: "ORD-2031-55502 cedar wardrobe" })
        assert.deepStrictEqual(context.recalled, [])
      }))

    it.effect.prop(
      "two conversations sharing words: recall never crosses over, and its laws hold",
      {
        turnsA: fc.integer({ min: 0, max: 25 }),
        turnsB: fc.integer({ min: 0, max: 25 }),
        query: fc.constantFrom("cedar wardrobe order", "delivery shipment window", "ORD-2031-6", "walnut oak")
      },
      ({ query, turnsA, turnsB }) =>
        Effect.gen(function*() {
          const memory = yield* ChatMemoryService
          const a = freshId("recall-a")
          const b = freshId("recall-b")
          yield* memory.addMessages(a, needle("ORD-2031-60001"))
          yield* memory.addMessages(b, needle("ORD-2031-60002"))
          for (let i = 1; i <= Math.max(turnsA, turnsB); i++) {
            if (i <= turnsA) yield* memory.addMessages(a, chatter(i, "oak"))
            if (i <= turnsB) yield* memory.addMessages(b, chatter(i, "walnut"))
          }
          yield* memory.awaitIdle()
          for (const [own, other] of [[a, "ORD-2031-60002"], [b, "ORD-2031-60001"]] as const) {
            const context = yield* memory.getContext(own, { query })
            checkRecall(context, yield* memory.getMessages(own, { limit: 1000 }))
            for (const turn of yield* memory.searchMemory(own, query, { limit: 10 })) {
              for (const message of turn.messages) assert.notInclude(message.content, other)
            }
            for (const turn of context.recalled) {
              for (const message of turn.messages) assert.notInclude(message.content, other)
            }
          }
        }),
      { fastCheck: { numRuns: 8 } }
    )
  })
