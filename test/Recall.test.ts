/**
 * Recall in the context: with a query, the older turns that match it come back whole and
 * verbatim after the recent turns, within the recall share of the budget, never below K recent
 * turns and never an unsummarized one; without a query the context is what it always was. What a
 * context with recall reads. And `searchMemory`, its validation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, HashMap, Layer, Option, Queue } from "effect"
import { recalledText } from "../src/domain/internal/recall.js"
import { SkillExecutionError } from "../src/errors/SkillExecutionError.js"
import * as ContextPrompt from "../src/layers/ai/ContextPrompt.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import type { SummarizationOptions } from "../src/strategies/internal/options.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { summarizingMemory } from "./fixtures/layers.js"
import * as FaultyStore from "./reliability/faultyStore.js"

const options = {
  kRawTurns: 2,
  tokenBudget: 1000,
  summaryTokenCap: 150,
  retries: 0
} satisfies Partial<SummarizationOptions>

/** Ordinary turns about deliveries, sharing their words. */
const chatter = (i: number) => [
  { role: "user" as const, content: `Turn ${i}: can you check the delivery status of the next shipment for me?` },
  { role: "assistant" as const, content: `Turn ${i}: the shipment is on its way and the delivery is planned as usual.` }
]

/** The turn that holds the answer: a tool call and its result, with a unique order id and amount. */
const planted = [
  { role: "user" as const, content: "Please look up the order for the walnut bookcase." },
  {
    role: "assistant" as const,
    content: "",
    metadata: { toolCalls: [{ id: "call-1", name: "lookup_order", params: { item: "walnut bookcase" } }] }
  },
  {
    role: "tool" as const,
    content: "{\"order\":\"ORD-2024-88417\",\"total\":\"$1,240.00\",\"eta\":\"April 18\"}",
    metadata: { toolCallId: "call-1", toolName: "lookup_order" }
  },
  { role: "assistant" as const, content: "Your walnut bookcase is order ORD-2024-88417, $1,240.00, due April 18." }
]

const conversation = (id: string, before = 5, after = 60) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = 1; i <= before; i++) yield* memory.addMessages(id, chatter(i))
    yield* memory.addMessages(id, planted)
    for (let i = before + 1; i <= before + after; i++) {
      yield* memory.addMessages(id, chatter(i))
      yield* memory.awaitIdle(id)
    }
  })

const question = "What was the total for order ORD-2024-88417 again?"

const unavailable = new SkillExecutionError({ skillId: "scripted", reason: "Unavailable", retryable: false })

describe("recall in the context", () => {
  it.effect("a query brings back the whole turn that answers it, after the recent turns, within the budget", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c")
      const plain = yield* memory.getContext("c")
      assert.notInclude(JSON.stringify(ContextPrompt.toPromptMessages(plain)), "ORD-2024-88417")
      const context = yield* memory.getContext("c", { query: question })
      const [first] = context.recalled
      assert.isDefined(first)
      // The whole turn: the user's request, the tool call, its result and the answer, verbatim.
      assert.deepStrictEqual(first?.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
      assert.deepStrictEqual([first?.fromSeq, first?.toSeq], [11, 14])
      assert.include(first?.messages[2]?.content, "ORD-2024-88417")
      // Placed last, just before the new message, labelled with its seqs.
      const prompt = ContextPrompt.toPromptMessages(context)
      const last = prompt[prompt.length - 1]
      const lastText = last?.role === "user" && typeof last.content !== "string" ? last.content[0] : undefined
      assert.strictEqual(
        lastText?.type === "text" ? lastText.text : "",
        recalledText(context.recalled, { dated: context.dated })
      )
      assert.include(recalledText(context.recalled), "[seq 11-14, ")
      // Counted, within the budget, and the recalled block within its share. The block is counted
      // from its messages' stored counts, never tokenized again: a bound on what it takes, a few
      // tokens per message over it at most.
      const counter = yield* TokenCounter
      const sent = yield* counter.countMessage({
        content: recalledText(context.recalled, { dated: context.dated })
      })
      const messages = context.recalled.reduce((n, turn) => n + turn.messages.length, 0)
      assert.isAtLeast(context.recalledTokens, sent)
      assert.isAtMost(context.recalledTokens, sent + 8 * messages)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
      assert.isAtMost(context.recalledTokens, 0.25 * options.tokenBudget)
      // Never a turn that is also shown among the recent ones.
      const firstRecent = context.recent[0]?.seq ?? Infinity
      for (const turn of context.recalled) assert.isBelow(turn.toSeq, firstRecent)
      // The recent turns gave room, but kept at least K.
      assert.isAtLeast(context.turnsShown, options.kRawTurns)
      assert.isAtMost(context.turnsShown, plain.turnsShown)
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect("without a query, or with recall off, the context is the plain one", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c")
      const plain = yield* memory.getContext("c")
      assert.deepStrictEqual(plain.recalled, [])
      assert.strictEqual(plain.recalledTokens, 0)
      const off = yield* memory.getContext("c", { query: question })
      assert.deepStrictEqual(off, plain)
    }).pipe(Effect.provide(summarizingMemory({ ...options, recall: "off" }))))

  it.effect("a query that matches nothing leaves the whole budget to the recent turns", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c")
      const plain = yield* memory.getContext("c")
      const none = yield* memory.getContext("c", { query: "zeppelin quaternion" })
      assert.deepStrictEqual(none.recalled, [])
      assert.deepStrictEqual([none.turnsShown, none.tokenCount], [plain.turnsShown, plain.tokenCount])
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect("the newest K turns win over recall when they need the room", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c", 5, 10)
      const long = "x".repeat(1200)
      yield* memory.addMessages("c", [{ role: "user", content: `first ${long}` }, { role: "assistant", content: "ok" }])
      yield* memory.addMessages("c", [{ role: "user", content: `second ${long}` }, {
        role: "assistant",
        content: "ok"
      }])
      const context = yield* memory.getContext("c", { query: question })
      assert.isAtLeast(context.turnsShown, 2)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.scoped("a recall is reported: MemoryRecalled and the ContextBuilt counts", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* conversation("c")
      yield* Queue.takeAll(events)
      const context = yield* memory.getContext("c", { query: question })
      const all = [...(yield* Queue.takeAll(events))]
      const recalled = all.find((event) => event._tag === "MemoryRecalled")
      const built = all.find((event) => event._tag === "ContextBuilt")
      assert.deepStrictEqual(
        recalled?._tag === "MemoryRecalled" ? recalled.turns.map((turn) => turn.fromSeq) : [],
        context.recalled.map((turn) => turn.fromSeq)
      )
      assert.strictEqual(built?._tag === "ContextBuilt" ? built.turnsRecalled : -1, context.recalled.length)
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect.prop(
    "recalled turns are whole, never shown twice, and the context keeps its budget",
    {
      before: fc.integer({ min: 0, max: 20 }),
      after: fc.integer({ min: 0, max: 40 }),
      budget: fc.integer({ min: 300, max: 2000 }),
      share: fc.double({ min: 0, max: 0.6, noNaN: true }),
      query: fc.constantFrom(question, "walnut bookcase", "delivery status shipment", "April 18", "nothing at all")
    },
    ({ after, before, budget, query, share }) =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        yield* conversation("p", before, after)
        const context = yield* memory.getContext("p", { query })
        assert.isAtMost(context.tokenCount, budget)
        assert.isAtMost(context.recalledTokens, Math.floor(share * budget))
        const stored = yield* memory.getMessages("p", { limit: 1000 })
        const recentSeqs = new Set(context.recent.map((m) => m.seq))
        const seen = new Set<number>()
        for (const turn of context.recalled) {
          // Whole: it starts at a user message and holds every stored message of its range.
          assert.strictEqual(turn.messages[0]?.role, "user")
          assert.deepStrictEqual(
            turn.messages.map((m) => m.seq),
            stored.filter((m) => m.seq >= turn.fromSeq && m.seq <= turn.toSeq).map((m) => m.seq)
          )
          const next = stored.find((m) => m.seq === turn.toSeq + 1)
          assert.isTrue(next === undefined || next.role === "user")
          for (const message of turn.messages) {
            assert.isFalse(recentSeqs.has(message.seq))
            assert.isFalse(seen.has(message.seq))
            seen.add(message.seq)
          }
        }
      }).pipe(Effect.provide(summarizingMemory({ ...options, tokenBudget: budget, recallTokenBudget: share }))),
    { fastCheck: { numRuns: 25 } }
  )
})

describe("searchMemory", () => {
  it.effect("finds the whole turn by an identifier, an amount or a date, best first; limit and before respected", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c", 5, 10)
      for (const query of ["ORD-2024-88417", "$1,240.00", "April 18", question]) {
        const [best] = yield* memory.searchMemory("c", query)
        assert.deepStrictEqual([best?.fromSeq, best?.toSeq], [11, 14], query)
      }
      assert.strictEqual((yield* memory.searchMemory("c", "delivery shipment", { limit: 3 })).length, 3)
      assert.deepStrictEqual(yield* memory.searchMemory("c", "ORD-2024-88417", { before: 11 }), [])
      assert.deepStrictEqual(yield* memory.searchMemory("unknown", "ORD-2024-88417"), [])
      yield* memory.clearMessages("c")
      assert.deepStrictEqual(yield* memory.searchMemory("c", "ORD-2024-88417"), [])
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect("bad arguments are refused naming the field", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const field = (effect: Effect.Effect<unknown, { readonly _tag: string }>) =>
        Effect.map(Effect.flip(effect), (error) => ("path" in error ? error.path : error._tag))
      assert.strictEqual(yield* field(memory.searchMemory("c", "x", { limit: 0 })), "options.limit")
      assert.strictEqual(yield* field(memory.searchMemory("c", "x", { limit: 51 })), "options.limit")
      assert.strictEqual(yield* field(memory.searchMemory("c", "x", { before: 0 })), "options.before")
      assert.strictEqual(yield* field(memory.searchMemory("c", "\uD800")), "query")
      assert.strictEqual(yield* field(memory.getContext("c", { query: "a\u0000b" })), "options.query")
    }).pipe(Effect.provide(summarizingMemory(options))))
})

describe("recall's room and reads", () => {
  it.effect("the block's room comes from turns the summary covers: every unsummarized turn stays shown", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c")
      const plain = yield* memory.getContext("c")
      const context = yield* memory.getContext("c", { query: question })
      assert.isAbove(context.recalled.length, 0)
      assert.deepStrictEqual([plain.turnsOmitted, context.turnsOmitted], [0, 0])
      // The same unsummarized turns, verbatim; only covered turns made way for the block.
      const unsummarized = (c: typeof plain) => c.recent.filter((m) => m.seq > c.summarizedUpTo)
      assert.deepStrictEqual(unsummarized(context), unsummarized(plain))
      assert.strictEqual(plain.turnsShown - context.turnsShown, plain.turnsCovered - context.turnsCovered)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
    }).pipe(Effect.provide(summarizingMemory(options))))

  it.effect("with the summary behind, a query omits no more than the plain context: the block only takes what is left", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* conversation("c")
      const plain = yield* memory.getContext("c")
      const context = yield* memory.getContext("c", { query: question })
      assert.isAbove(plain.turnsOmitted, 0)
      assert.deepStrictEqual(
        [context.turnsOmitted, context.messagesOmitted, context.recent],
        [plain.turnsOmitted, plain.messagesOmitted, plain.recent]
      )
      assert.strictEqual(context.tokenCount, plain.tokenCount + context.recalledTokens)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
    }).pipe(Effect.provide(summarizingMemory(options, { summarize: () => Effect.fail(unavailable) }))))

  it.effect("a context with recall reads the window (with the settings) once, searches once and reads the hits' turns in one read", () =>
    Effect.gen(function*() {
      const store = yield* FaultyStore.make(yield* MemoryStore.make, () => Effect.succeed(false))
      const callsOf = Effect.map(
        store.calls,
        (calls) => (operation: FaultyStore.Operation) => Option.getOrElse(HashMap.get(calls, operation), () => 0)
      )
      yield* Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        yield* conversation("c")
        const before = yield* callsOf
        const context = yield* memory.getContext("c", { query: question })
        const after = yield* callsOf
        assert.isAbove(context.recalled.length, 0)
        const reads = [
          "getSettings",
          "readWindow",
          "searchMessages",
          "readTurns",
          "listMessages",
          "countMessages"
        ] as const
        assert.deepStrictEqual(
          Object.fromEntries(reads.map((operation) => [operation, after(operation) - before(operation)])),
          { getSettings: 0, readWindow: 1, searchMessages: 1, readTurns: 1, listMessages: 0, countMessages: 0 }
        )
      }).pipe(
        Effect.provide(
          ChatMemory.layer.pipe(
            Layer.provideMerge(SummarizationStrategy.layer(options)),
            Layer.provideMerge(ScriptedSkill.layer()),
            Layer.provideMerge(Store.layerFrom(store.store)),
            Layer.provideMerge(ApproximateTokenCounter.layer)
          )
        )
      )
    }))
})
